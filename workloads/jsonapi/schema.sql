-- jsonapi: users with API tokens, 1000 posts with authors, tags and
-- comments. Every value is a function of its row number, so that every
-- load gives the same data.
DROP TABLE IF EXISTS comments;
DROP TABLE IF EXISTS post_tags;
DROP TABLE IF EXISTS tags;
DROP TABLE IF EXISTS posts;
DROP TABLE IF EXISTS api_tokens;
DROP TABLE IF EXISTS users;

CREATE TABLE users (
	id INT PRIMARY KEY,
	name VARCHAR(100) NOT NULL,
	email VARCHAR(255) NOT NULL UNIQUE,
	created_at DATETIME NOT NULL
) ENGINE=InnoDB;

CREATE TABLE api_tokens (
	token CHAR(40) PRIMARY KEY,
	user_id INT NOT NULL,
	expires_at DATETIME NOT NULL,
	KEY (user_id),
	FOREIGN KEY (user_id) REFERENCES users (id)
) ENGINE=InnoDB;

CREATE TABLE posts (
	id INT PRIMARY KEY,
	user_id INT NOT NULL,
	title VARCHAR(255) NOT NULL,
	body TEXT NOT NULL,
	created_at DATETIME NOT NULL,
	KEY (user_id),
	KEY (created_at),
	FOREIGN KEY (user_id) REFERENCES users (id)
) ENGINE=InnoDB;

CREATE TABLE tags (
	id INT PRIMARY KEY,
	name VARCHAR(50) NOT NULL UNIQUE
) ENGINE=InnoDB;

CREATE TABLE post_tags (
	post_id INT NOT NULL,
	tag_id INT NOT NULL,
	PRIMARY KEY (post_id, tag_id),
	KEY (tag_id),
	FOREIGN KEY (post_id) REFERENCES posts (id),
	FOREIGN KEY (tag_id) REFERENCES tags (id)
) ENGINE=InnoDB;

CREATE TABLE comments (
	id INT PRIMARY KEY,
	post_id INT NOT NULL,
	user_id INT NOT NULL,
	body TEXT NOT NULL,
	created_at DATETIME NOT NULL,
	KEY (post_id),
	FOREIGN KEY (post_id) REFERENCES posts (id),
	FOREIGN KEY (user_id) REFERENCES users (id)
) ENGINE=InnoDB;

-- 100 users, each with one token: tok_<40 - 4 chars of the zero-padded id>.
INSERT INTO users
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
SELECT i, CONCAT('User ', i), CONCAT('user', i, '@example.org'), '2025-01-01 00:00:00' + INTERVAL i HOUR FROM n;

INSERT INTO api_tokens
SELECT CONCAT('tok_', LPAD(id, 36, '0')), id, '2099-01-01 00:00:00' FROM users;

-- 1000 posts, authors spread over the users.
INSERT INTO posts
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
SELECT i, (i * 37) % 100 + 1, CONCAT('Post ', i), REPEAT('Lorem ipsum dolor sit amet. ', 10 + i % 10),
	'2026-01-01 00:00:00' + INTERVAL i MINUTE FROM n;

INSERT INTO tags
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)
SELECT i, CONCAT('tag-', i) FROM n;

-- One to three tags a post; IGNORE drops a tag drawn twice.
INSERT IGNORE INTO post_tags
SELECT id, id % 20 + 1 FROM posts
UNION ALL SELECT id, (id * 7 + 3) % 20 + 1 FROM posts WHERE id % 3 <> 0
UNION ALL SELECT id, (id * 13 + 11) % 20 + 1 FROM posts WHERE id % 3 = 2;

-- 5000 comments, zero to many a post. The numbers come from a cross join of
-- digits: MySQL stops a recursive CTE at 1000 levels.
CREATE TEMPORARY TABLE digits (d INT PRIMARY KEY);
INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
INSERT INTO comments
SELECT i, (i * i) % 1009 % 1000 + 1, i % 100 + 1, CONCAT('Comment ', i), '2026-02-01 00:00:00' + INTERVAL i MINUTE
FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 1 AS i FROM digits a, digits b, digits c, digits e) n
WHERE i <= 5000;
DROP TEMPORARY TABLE digits;
