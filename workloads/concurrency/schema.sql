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

-- One row of every column type mysqlnd counts a fetch of (its
-- proto_text_fetched_* and proto_binary_fetched_* counters), NULL among
-- them: each request reads it in both protocols.
DROP TABLE IF EXISTS typed;
CREATE TABLE typed (
	id INT PRIMARY KEY,
	t TINYINT, s SMALLINT, m MEDIUMINT, i INT, b BIGINT,
	d DECIMAL(6,2), f FLOAT, g DOUBLE,
	dt DATE, y YEAR, tm TIME, dtm DATETIME, ts TIMESTAMP NULL,
	v VARCHAR(16), bl BLOB, e ENUM('a','b'), st SET('x','y'), bt BIT(3),
	n INT NULL, geo POINT
) ENGINE=InnoDB;
INSERT INTO typed VALUES (1, 1, 2, 3, 4, 5, 6.25, 7.5, 8.125,
	'2024-01-02', 2024, '10:11:12', '2024-01-02 10:11:12', '2024-01-02 10:11:12',
	'text', 'blob', 'b', 'x,y', b'101', NULL, POINT(1, 2));
