import { describe, expect, it } from 'vitest';
import { idFloor, idTime, isUuid, newId, ulid, uuidv7 } from './ids.ts';

describe('ids', () => {
  it('are prefixed ULIDs', () => {
    expect(newId('event')).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('sort in creation order, also within one millisecond and under a clock that stands still', () => {
    const frozen = Date.UTC(2026, 0, 1);
    const ids = Array.from({ length: 1000 }, () => ulid(frozen));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(1000);
    expect(ulid(frozen + 1) > (ids.at(-1) as string)).toBe(true);
  });

  it('encode the time in the first ten characters', () => {
    const at = Date.UTC(2040, 0, 1);
    const id = ulid(at);
    const decoded = [...id.slice(0, 10)].reduce(
      (n, c) => n * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(c),
      0,
    );
    expect(decoded).toBe(at);
    expect(ulid(at + 1000).slice(0, 10) > id.slice(0, 10)).toBe(true);
  });

  it('of one kind carry their own time: a later id of another kind never moves it', () => {
    const at = Date.UTC(2035, 0, 1, 0, 0, 0, 7);
    newId('request', at + 60_000);
    const event = newId('event', at);
    expect(idTime(event)).toBe(at);
    expect(event >= idFloor('event', at) && event < idFloor('event', at + 1)).toBe(true);
    // Within its own kind, a millisecond already used (or a clock that stepped back) keeps the later time
    expect(idTime(newId('event', at - 5))).toBe(at);
  });

  it('make version 7 UUIDs that start with their time and differ within one millisecond', () => {
    const at = Date.UTC(2026, 11, 4, 23, 59, 59, 123);
    const ids = Array.from({ length: 1000 }, () => uuidv7(at));
    for (const id of ids) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(isUuid(id)).toBe(true);
      expect(Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16)).toBe(at);
    }
    expect(new Set(ids).size).toBe(1000);
    const later = uuidv7(at + 1);
    expect(ids.every((id) => id < later)).toBe(true);
  });
});
