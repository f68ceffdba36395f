// Velocity over a history (a backtest's, docs/risk.md, Backtests): each signal's features as the live read
// counted them when it was decided, from the signals streamed in (time, id) order. A key's windows hold
// each key's signals of the longest window (a card's, an email's few), the tenant's hold whole minutes;
// every signal is added once and leaves each window once, so a year streams in O(1) a signal and memory
// holds the longest window, never the history.
import {
  VELOCITY_WINDOWS,
  type VelocityFeature,
  type VelocityKey,
  type VelocityWindow,
} from './decision-points.ts';
import { emptyTotals, tenantFeatures, tenantWindowMinutes, type WindowTotals } from './tenant-windows.ts';
import { type SignalKeys, VELOCITY_KEY, type Velocity } from './velocity.ts';

/** A signal as the history streams it */
export interface HistorySignal {
  at: Date;
  amount: bigint;
  currency: string;
  declined: boolean;
  keys: SignalKeys;
}

interface Entry {
  at: number;
  totals: WindowTotals;
}

/** A run of entries (a key's signals, or a tenant's minutes) and, per window, the part of it inside. */
class Runs {
  readonly entries: Entry[] = [];
  /** Per window: the first entry inside, the next not yet added, the sum of those between */
  readonly windows = new Map<VelocityWindow, { first: number; next: number; totals: WindowTotals }>();

  constructor(windows: Iterable<VelocityWindow>) {
    for (const w of windows) this.windows.set(w, { first: 0, next: 0, totals: emptyTotals() });
  }

  /** Moves a window to [from, to) of the entries' times (both only ever grow). */
  slide(window: VelocityWindow, from: number, to: number, fromInclusive: boolean): WindowTotals {
    const run = this.windows.get(window) as { first: number; next: number; totals: WindowTotals };
    while (run.next < this.entries.length && (this.entries[run.next] as Entry).at < to) {
      addInto(run.totals, (this.entries[run.next++] as Entry).totals, 1n);
    }
    const before = (at: number) => (fromInclusive ? at < from : at <= from);
    while (run.first < run.next && before((this.entries[run.first] as Entry).at)) {
      addInto(run.totals, (this.entries[run.first++] as Entry).totals, -1n);
    }
    return run.totals;
  }

  /** Entries every window has passed are dropped. */
  forget(): void {
    const passed = Math.min(...[...this.windows.values()].map((r) => r.first));
    if (passed < 64 && passed < this.entries.length) return;
    this.entries.splice(0, passed);
    for (const run of this.windows.values()) {
      run.first -= passed;
      run.next -= passed;
    }
  }
}

const MINUTE_MS = 60_000;
/** How many signals pass between sweeps of the keys no window holds any more */
const SWEEP_EVERY = 100_000;

export class VelocityOverHistory {
  private readonly keyWindows = new Map<VelocityKey, VelocityWindow[]>();
  private readonly byKey = new Map<VelocityKey, Map<string, Runs>>();
  private readonly tenant: Runs | undefined;
  private readonly longestMs: number;
  private seen = 0;

  constructor(private readonly features: readonly VelocityFeature[]) {
    const tenantWindows = new Set<VelocityWindow>();
    for (const f of features) {
      if (f.key === 'tenant') {
        tenantWindows.add(f.window);
        continue;
      }
      const windows = this.keyWindows.get(f.key) ?? [];
      if (!windows.includes(f.window)) windows.push(f.window);
      this.keyWindows.set(f.key, windows);
      this.byKey.set(f.key, new Map());
    }
    this.tenant = tenantWindows.size > 0 ? new Runs(tenantWindows) : undefined;
    this.longestMs = Math.max(0, ...features.map((f) => VELOCITY_WINDOWS[f.window] * 1000));
  }

  /** How far before a period its history must start: the longest window, and a minute's grace for the tenant's. */
  get lookBackMs(): number {
    return this.longestMs + (this.tenant ? 2 * MINUTE_MS : 0);
  }

  /** The features for a signal, from those streamed before it (call before `add` of the same signal). */
  featuresAt(signal: HistorySignal): Velocity {
    const at = signal.at.getTime();
    const velocity: Velocity = {};
    for (const [key, windows] of this.keyWindows) {
      const value = signal.keys[(VELOCITY_KEY[key] as { key: keyof SignalKeys }).key];
      const runs = value === null ? undefined : this.byKey.get(key)?.get(value);
      const slot: Record<string, bigint> = {};
      for (const window of windows) {
        // A key's window: its signals after `at − window`, up to this one
        const t = runs
          ? runs.slide(window, at - VELOCITY_WINDOWS[window] * 1000, Number.POSITIVE_INFINITY, false)
          : undefined;
        for (const f of this.features) {
          if (f.key !== key || f.window !== window) continue;
          slot[`${f.metric}_${window}`] = !t
            ? 0n
            : f.metric === 'count'
              ? t.count
              : f.metric === 'declines'
                ? t.declines
                : (t.sums.get(signal.currency) ?? 0n);
        }
      }
      runs?.forget();
      velocity[key] = slot;
    }
    if (this.tenant) {
      const tenant = this.tenant;
      const totals = new Map<VelocityWindow, WindowTotals>();
      for (const window of tenant.windows.keys()) {
        const { from, to } = tenantWindowMinutes(signal.at, window);
        totals.set(window, tenant.slide(window, from * MINUTE_MS, to * MINUTE_MS, true));
      }
      tenant.forget();
      velocity.tenant = tenantFeatures(this.features, (w) => totals.get(w) ?? emptyTotals(), signal.currency);
    }
    return velocity;
  }

  /** A signal of the history, in (time, id) order. */
  add(signal: HistorySignal): void {
    const at = signal.at.getTime();
    const totals = (): WindowTotals => ({
      count: 1n,
      declines: signal.declined ? 1n : 0n,
      sums: new Map([[signal.currency, signal.amount]]),
    });
    for (const [key, windows] of this.keyWindows) {
      const value = signal.keys[(VELOCITY_KEY[key] as { key: keyof SignalKeys }).key];
      if (value === null) continue;
      const values = this.byKey.get(key) as Map<string, Runs>;
      let runs = values.get(value);
      if (!runs) {
        runs = new Runs(windows);
        values.set(value, runs);
      }
      runs.entries.push({ at, totals: totals() });
    }
    if (this.tenant) {
      const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
      const last = this.tenant.entries.at(-1);
      if (last?.at === minute) addInto(last.totals, totals(), 1n);
      else this.tenant.entries.push({ at: minute, totals: totals() });
    }
    if (++this.seen % SWEEP_EVERY === 0) this.sweep(at);
  }

  /** Keys whose last signal has left the longest window are dropped: memory holds the window, not the history. */
  private sweep(at: number): void {
    for (const values of this.byKey.values()) {
      for (const [value, runs] of values) {
        const last = runs.entries.at(-1);
        if (!last || last.at <= at - this.longestMs) values.delete(value);
      }
    }
  }
}

function addInto(into: WindowTotals, t: WindowTotals, sign: bigint): void {
  into.count += sign * t.count;
  into.declines += sign * t.declines;
  for (const [currency, amount] of t.sums)
    into.sums.set(currency, (into.sums.get(currency) ?? 0n) + sign * amount);
}
