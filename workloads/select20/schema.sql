-- select20: the report's table, 1000 rows, deterministic.
DROP TABLE IF EXISTS t;
CREATE TABLE t (
	id INT PRIMARY KEY,
	title VARCHAR(255) NOT NULL,
	body TEXT NOT NULL,
	created_at DATETIME NOT NULL
) ENGINE=InnoDB;
INSERT INTO t
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
SELECT i, CONCAT('Post ', i), REPEAT('Lorem ipsum dolor sit amet. ', 20), '2026-01-01 00:00:00' + INTERVAL i MINUTE FROM n;
