-- The smallest records a write can log: one row of one bigint, its one btree entry, the commit. What every
-- other shape's records cost before any data is in them.
-- schema
CREATE TABLE t (id bigint);
CREATE INDEX ON t (id);
CREATE SEQUENCE s;
-- operation
INSERT INTO t VALUES (nextval('s'));
