// Verified credentials and tenant settings, kept in memory so a request does not pay a hash, a signature
// check and database reads to learn who is calling and where its webhooks go (docs/architecture.md,
// Credential cache). Any change to a tenant table is announced by Postgres itself (a trigger NOTIFYs at
// commit, migration 0025), and every process drops everything it cached when it hears it; a short TTL
// is the safety net for a lost notification, and while this process's notification connection is down
// nothing cached is trusted. Only what was found is cached: an unknown key costs its lookup every time.
import type { Clock } from '../clock/clock.ts';

export interface Cached<T> {
  value: T;
  /** On the injected clock: when the value stops being true by itself (a rotated-out key's overlap end) */
  validUntil?: Date | null;
}

interface Entry {
  value: unknown;
  expiresAtMs: number;
  validUntil: Date | null;
}

export interface TenantCacheOptions {
  /** How long an entry is trusted without news (the safety net), ms (default: 30000) */
  ttlMs?: number;
  /** Entries kept at most; past it the cache starts over (default: 50000) */
  maxEntries?: number;
  /** Whether notifications are arriving (the process's LISTEN connection is up) */
  isListening: () => boolean;
}

export class TenantCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every change: a load that began before a change is not kept after it */
  private generation = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly clock: Clock,
    private readonly options: TenantCacheOptions,
  ) {
    this.ttlMs = options.ttlMs ?? 30_000;
    this.maxEntries = options.maxEntries ?? 50_000;
  }

  /**
   * The cached value for the key, else what `load` finds (kept unless a change arrived meanwhile);
   * undefined when `load` finds nothing.
   */
  async get<T>(key: string, load: () => Promise<Cached<T> | undefined>): Promise<T | undefined> {
    const trusted = this.ttlMs > 0 && this.options.isListening();
    const entry = trusted ? this.entries.get(key) : undefined;
    if (entry) {
      if (
        entry.expiresAtMs > performance.now() &&
        (entry.validUntil === null || entry.validUntil > this.clock.now())
      ) {
        return entry.value as T;
      }
      this.entries.delete(key);
    }
    const generation = this.generation;
    const found = await load();
    if (!found) return undefined;
    if (trusted && generation === this.generation && this.options.isListening()) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      this.entries.set(key, {
        value: found.value,
        expiresAtMs: performance.now() + this.ttlMs,
        validUntil: found.validUntil ?? null,
      });
    }
    return found.value;
  }

  /** A tenant changed somewhere (or news may have been missed): forget everything, at once. */
  clear(): void {
    this.generation++;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
