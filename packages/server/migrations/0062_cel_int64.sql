-- CEL's ints are 64-bit and an operation past them is an error: a backtest evaluated in the database
-- (platform/risk/rule-sql.ts) computes in numeric and reads an int out of range as NULL, CEL's error.
CREATE FUNCTION cel_int64(value numeric) RETURNS numeric
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT CASE WHEN value BETWEEN -9223372036854775808 AND 9223372036854775807 THEN value END $$;
