-- work.sql - a deterministic SQLite workload for the robustness corpus.
CREATE TABLE t(id INTEGER PRIMARY KEY, grp INTEGER, name TEXT, v REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
INSERT INTO t SELECT i, i % 97, 'name' || (i * 7919 % 50000), (i * 31 % 1000) / 10.0 FROM n;
CREATE INDEX t_grp ON t(grp);
SELECT count(*), sum(v), min(name), max(name) FROM t;
SELECT grp, count(*), round(avg(v), 3) FROM t WHERE grp < 5 GROUP BY grp ORDER BY grp;
CREATE TABLE u AS SELECT grp, sum(v) AS s FROM t GROUP BY grp;
SELECT t.grp, count(*), round(max(u.s), 1) FROM t JOIN u ON t.grp = u.grp
  WHERE t.id % 1000 = 0 GROUP BY t.grp ORDER BY t.grp LIMIT 5;
SELECT name FROM t ORDER BY name DESC LIMIT 3;
