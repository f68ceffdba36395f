-- CEL orders strings by their UTF-16 code units; Postgres's "C" collation by code points (UTF-8 bytes).
-- The two differ only where a character from U+E000 to U+FFFF meets one past U+FFFF: UTF-16 puts the
-- latter first (its surrogates, D800-DFFF, come before E000). cel_string_order maps a string to one whose
-- code-point order is its UTF-16 order, so a backtest judged in the database (platform/risk/rule-sql.ts)
-- compares strings as CEL does: a character from U+E000 to U+FFFF becomes U+10FFFF followed by itself,
-- and U+10FFFF itself becomes U+10FFFF U+0001. The codes are prefix-free and in UTF-16's order (below
-- U+E000 < U+10000..U+10FFFE < U+10FFFF < U+E000..U+FFFF), so comparing the mapped strings compares the
-- originals. A string with no character from U+E000 up (nearly all; ASCII is tested first, as it is
-- cheaper than the pattern) is returned as it is.
--
-- Not STRICT, so that the planner inlines it into the backtest's query (a STRICT SQL function with a
-- CASE body is called instead, ten times slower over two million rows); NULL in is NULL out all the same.
CREATE FUNCTION cel_string_order(value text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT CASE WHEN octet_length(value) = char_length(value) OR value !~ '[\uE000-\U0010FFFF]'
    THEN value
    ELSE regexp_replace(regexp_replace(value, '\U0010FFFF', chr(1114111) || chr(1), 'g'),
      '([\uE000-\uFFFF])', chr(1114111) || '\1', 'g') END $$;
