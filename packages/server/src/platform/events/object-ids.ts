// The ids an event is about, read from its payload: here for its view, in the database for its index
// (migration 0081: a GIN index of 8-byte hashes of the ids).
import { type RawBuilder, sql } from 'kysely';

/**
 * The events that may be about an object: those whose ids hash as its id does. The reader keeps those whose
 * ids name it (EventsService.list, from the ids it reads for the view anyway): rechecked in SQL, each
 * candidate's payload would be parsed once more, 25 µs an event, and an id a million events name (a site's)
 * would take half a minute instead of one second.
 */
export function aboutObject(objectId: string): RawBuilder<boolean> {
  return sql<boolean>`event_object_keys(payload) @> ARRAY[hashtextextended(${objectId}, 0)]`;
}

const OBJECT_ID_KEY = /(Id|_id)$/;

/**
 * The ids an event is about, for finding the events of one object: values of keys ending in "Id" or
 * "_id", and "reference", at the top level and inside "data" or "resource". The database finds them
 * with the same rule, event_object_ids() (migration 0081), for its index; a test holds the two equal.
 */
export function objectIdsOf(body: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  const collect = (record: unknown) => {
    if (record === null || typeof record !== 'object' || Array.isArray(record)) return;
    for (const [key, value] of Object.entries(record)) {
      if (key === 'eventId' || key === 'event_id') continue;
      if (!OBJECT_ID_KEY.test(key) && key !== 'reference') continue;
      if ((typeof value === 'string' && value !== '') || typeof value === 'number') ids.add(String(value));
    }
  };
  collect(body);
  collect(body.data);
  collect(body.resource);
  return [...ids];
}
