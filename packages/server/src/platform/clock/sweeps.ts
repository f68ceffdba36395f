// Time-based work is stored as due times on domain rows; sweeps read the injected clock and process
// what is due. A sweep must be safe to run concurrently in several processes (claim rows with locks).
import type { Logger } from 'pino';

export type Sweep = () => Promise<number>;

export class Sweeps {
  private readonly sweeps = new Map<string, Sweep>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  register(name: string, sweep: Sweep): void {
    if (this.sweeps.has(name)) throw new Error(`sweep ${name} registered twice`);
    this.sweeps.set(name, sweep);
  }

  /** Runs every sweep once, in registration order; answers how many rows each processed. */
  async runAll(): Promise<Record<string, number>> {
    const processed: Record<string, number> = {};
    for (const [name, sweep] of this.sweeps) {
      try {
        processed[name] = await sweep();
      } catch (err) {
        this.logger.error({ err, sweep: name }, 'sweep failed');
        processed[name] = 0;
      }
    }
    return processed;
  }

  /** Background loop in real time; overlapping runs are skipped rather than queued. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.runAll().then(
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
