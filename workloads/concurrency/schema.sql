-- The concurrency check's table: 20 fixed rows, so that every request reads
-- the same bytes and moves every mysqlnd counter by the same amount.
DROP TABLE IF EXISTS counted;
CREATE TABLE counted (
	id INT PRIMARY KEY,
	name VARCHAR(32) NOT NULL,
	payload VARCHAR(255) NOT NULL
) ENGINE=InnoDB;
INSERT INTO counted
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
SELECT i, CONCAT('row ', LPAD(i, 2, '0')), REPEAT('counted ', 16) FROM n;
