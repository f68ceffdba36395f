-- The ids an event is about (an order, its transaction, a card, a customer…), so a tenant can find the
-- events of one object. The outbox derives them from the body with this same rule: keys ending in "Id" or
-- "_id", and "reference", at the top level and inside "data" or "resource" (the event's own id excluded).
ALTER TABLE events ADD COLUMN object_ids text[] NOT NULL DEFAULT '{}';
UPDATE events SET object_ids = ARRAY(
  SELECT DISTINCT f.value FROM (
    SELECT key, value FROM jsonb_each_text(payload::jsonb)
    UNION ALL
    SELECT key, value FROM jsonb_each_text(CASE WHEN jsonb_typeof(payload::jsonb -> 'data') = 'object' THEN payload::jsonb -> 'data' ELSE '{}'::jsonb END)
    UNION ALL
    SELECT key, value FROM jsonb_each_text(CASE WHEN jsonb_typeof(payload::jsonb -> 'resource') = 'object' THEN payload::jsonb -> 'resource' ELSE '{}'::jsonb END)
  ) f
  WHERE (f.key ~ '(Id|_id)$' OR f.key = 'reference') AND f.key NOT IN ('eventId', 'event_id') AND f.value IS NOT NULL AND f.value <> ''
);
CREATE INDEX events_object_ids ON events USING gin (object_ids);
