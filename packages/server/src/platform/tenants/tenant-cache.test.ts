import { describe, expect, it } from 'vitest';
import { SandboxClock } from '../clock/clock.ts';
import { TenantCache } from './tenant-cache.ts';

function aCache(options: { ttlMs?: number; listening?: () => boolean } = {}) {
  const clock = new SandboxClock(0);
  let loads = 0;
  const cache = new TenantCache(clock, {
    ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
    isListening: options.listening ?? (() => true),
  });
  const load = (value: string | undefined, validUntil?: Date) => async () => {
    loads++;
    return value === undefined ? undefined : { value, validUntil: validUntil ?? null };
  };
  return { cache, clock, load, loads: () => loads };
}

describe('TenantCache', () => {
  it('answers a found value from memory until cleared', async () => {
    const { cache, load, loads } = aCache();
    expect(await cache.get('k', load('a'))).toBe('a');
    expect(await cache.get('k', load('b'))).toBe('a');
    expect(loads()).toBe(1);
    cache.clear();
    expect(await cache.get('k', load('b'))).toBe('b');
  });

  it('never remembers that something was not found', async () => {
    const { cache, load, loads } = aCache();
    expect(await cache.get('k', load(undefined))).toBeUndefined();
    expect(await cache.get('k', load(undefined))).toBeUndefined();
    expect(loads()).toBe(2);
  });

  it('drops a value at its validity end on the injected clock (a rotated-out key)', async () => {
    const { cache, clock, load } = aCache();
    expect(await cache.get('k', load('old', new Date(clock.now().getTime() + 60_000)))).toBe('old');
    expect(await cache.get('k', load('gone'))).toBe('old');
    clock.advance(60_000);
    expect(await cache.get('k', load(undefined))).toBeUndefined();
  });

  it('does not keep a value loaded across a change (the load may have read the old row)', async () => {
    const { cache, loads } = aCache();
    const stale = cache.get('k', async () => {
      cache.clear();
      return { value: 'old' };
    });
    expect(await stale).toBe('old');
    expect(await cache.get('k', async () => ({ value: 'new' }))).toBe('new');
    expect(loads()).toBe(0);
  });

  it('trusts nothing while notifications may be missed, and nothing with a TTL of 0', async () => {
    let listening = false;
    const deaf = aCache({ listening: () => listening });
    await deaf.cache.get('k', deaf.load('a'));
    await deaf.cache.get('k', deaf.load('a'));
    expect(deaf.loads()).toBe(2);
    listening = true;
    await deaf.cache.get('k', deaf.load('a'));
    await deaf.cache.get('k', deaf.load('a'));
    expect(deaf.loads()).toBe(3);

    const off = aCache({ ttlMs: 0 });
    await off.cache.get('k', off.load('a'));
    await off.cache.get('k', off.load('a'));
    expect(off.loads()).toBe(2);
  });

  it('lets an entry lapse after its TTL', async () => {
    const { cache, load, loads } = aCache({ ttlMs: 20 });
    await cache.get('k', load('a'));
    await new Promise((resolve) => setTimeout(resolve, 30));
    await cache.get('k', load('a'));
    expect(loads()).toBe(2);
  });
});
