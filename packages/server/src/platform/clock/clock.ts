// Domain code never calls Date.now(): it asks an injected Clock (docs/architecture.md, Clock and sweeps).

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * Sandbox clock: real time plus an offset that only grows. Advancing moves every due time into the past,
 * so sweeps pick the work up at once. The offset is persisted by the caller so a restart keeps it.
 * A frozen sandbox clock (tests) starts at a fixed instant and moves only when advanced, so a slow
 * machine can never make something due that the test did not advance to.
 */
export class SandboxClock implements Clock {
  private readonly frozenAtMs: number | undefined;

  constructor(
    private offsetMs = 0,
    options: { frozenAt?: Date } = {},
  ) {
    this.frozenAtMs = options.frozenAt?.getTime();
  }

  now(): Date {
    return new Date((this.frozenAtMs ?? Date.now()) + this.offsetMs);
  }

  get offset(): number {
    return this.offsetMs;
  }

  /** Adopt an offset read from storage (another process may have advanced it); never goes backwards. */
  adopt(offsetMs: number): void {
    if (offsetMs > this.offsetMs) this.offsetMs = offsetMs;
  }

  advance(ms: number): Date {
    if (!Number.isInteger(ms) || ms < 0)
      throw new RangeError('the clock only moves forward by whole milliseconds');
    this.offsetMs += ms;
    return this.now();
  }
}

/** Whole days from `since` to `now` (0 the same day, never negative), as the risk rules' `age_days` read them */
export const daysSince = (since: Date, now: Date): bigint =>
  BigInt(Math.max(0, Math.floor((now.getTime() - since.getTime()) / 86_400_000)));

export function addSeconds(date: Date, seconds: number): Date {
  return new Date(date.getTime() + seconds * 1000);
}

/** The calendar date `months` later, clamped to the month's last day (31 Jan + 1 month = 28/29 Feb). */
export function addMonths(date: Date, months: number): Date {
  const result = new Date(date);
  const day = result.getUTCDate();
  result.setUTCDate(1);
  result.setUTCMonth(result.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(result.getUTCFullYear(), result.getUTCMonth() + 1, 0)).getUTCDate();
  result.setUTCDate(Math.min(day, lastDay));
  return result;
}
