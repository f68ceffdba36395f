// Time-based work is stored as due times on domain rows; sweeps read the injected clock and process
// what is due. Several processes may share the database: a session advisory lock lets one process at a
// time run the sweeps (a process that dies releases it with its connection), so billing, expiries and
// retries run once. The background loop skips a round while another process sweeps; an explicit run
// (a sandbox clock advance) waits its turn, so what it answers includes everything that became due.
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { Metrics } from '../http/metrics.ts';

const SWEEP_LOCK = 727_002;

export type Sweep = () => Promise<number>;

export interface SweepOptions {
  /**
   * When the sweep's next piece of work falls due (undefined: nothing waits). A sandbox clock advance
   * steps through these instants, so work that makes more work (a bill, then the next period's bill, a
   * retry) runs at each of its times, in order, as if the time had passed.
   */
  nextDue?: () => Promise<Date | undefined>;
}

export class Sweeps {
  private readonly sweeps = new Map<string, Sweep>();
  private readonly dueTimes: (() => Promise<Date | undefined>)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly db: Db,
    private readonly metrics?: Pick<Metrics, 'sweepDuration' | 'sweepFailures' | 'sweepLastSuccess'>,
  ) {}

  register(name: string, sweep: Sweep, options: SweepOptions = {}): void {
    if (this.sweeps.has(name)) throw new Error(`sweep ${name} registered twice`);
    this.sweeps.set(name, sweep);
    // Exported from the start: failures at 0, so an alert on their increase fires on the first one; the
    // last success at the registration, so a sweep that never succeeds still ages into its alert.
    this.metrics?.sweepFailures.inc({ sweep: name }, 0);
    this.metrics?.sweepDuration.zero({ sweep: name });
    this.metrics?.sweepLastSuccess.set({ sweep: name }, Date.now() / 1000);
    if (options.nextDue) this.dueTimes.push(options.nextDue);
  }

  /** The earliest instant some sweep has work due (see SweepOptions.nextDue). */
  async nextDue(): Promise<Date | undefined> {
    let earliest: Date | undefined;
    for (const due of this.dueTimes) {
      const at = await due();
      if (at && (!earliest || at < earliest)) earliest = at;
    }
    return earliest;
  }

  /**
   * Runs every sweep once, in registration order, holding the cluster's sweep lock; answers how many
   * rows each processed. With `waitForTurn: false` it answers undefined when another process sweeps.
   */
  async runAll(
    options: { waitForTurn: boolean } = { waitForTurn: true },
  ): Promise<Record<string, number> | undefined> {
    return this.db.connection().execute(async (lockHolder) => {
      if (options.waitForTurn) {
        await sql`SELECT pg_advisory_lock(${SWEEP_LOCK})`.execute(lockHolder);
      } else {
        const { rows } = await sql<{
          locked: boolean;
        }>`SELECT pg_try_advisory_lock(${SWEEP_LOCK}) AS locked`.execute(lockHolder);
        if (!rows[0]?.locked) return undefined;
      }
      try {
        return await this.runEach();
      } finally {
        await sql`SELECT pg_advisory_unlock(${SWEEP_LOCK})`.execute(lockHolder);
      }
    });
  }

  private async runEach(): Promise<Record<string, number>> {
    const processed: Record<string, number> = {};
    for (const [name, sweep] of this.sweeps) {
      const ended = this.metrics?.sweepDuration.startTimer({ sweep: name });
      try {
        processed[name] = await sweep();
        this.metrics?.sweepLastSuccess.set({ sweep: name }, Date.now() / 1000);
      } catch (err) {
        this.logger.error({ err, sweep: name }, 'sweep failed');
        this.metrics?.sweepFailures.inc({ sweep: name });
        processed[name] = 0;
      }
      ended?.();
    }
    return processed;
  }

  /** Background loop in real time; overlapping runs are skipped rather than queued. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.runAll({ waitForTurn: false }).then(
        () => undefined,
        () => undefined,
      );
      void this.running.finally(() => {
        this.running = undefined;
      });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
