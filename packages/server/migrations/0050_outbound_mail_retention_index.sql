-- The outbound mail retention sweep (TESSERA_OUTBOUND_MAIL_RETENTION_DAYS) deletes sent and given-up
-- messages by age, in batches: this index finds them without reading the whole table on every sweep.
-- The table holds a month of mail at most, so the index is built in place.
CREATE INDEX outbound_mail_done ON outbound_mail (created_at) WHERE status IN ('sent', 'failed');
