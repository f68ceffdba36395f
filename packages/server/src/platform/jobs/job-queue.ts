// pg-boss in the same Postgres. Jobs are enqueued inside the business transaction (pg-boss takes the
// transaction as its `db`), so a rolled-back step never leaves a job behind. Retries of domain work are
// not pg-boss's: they are due times on domain rows, picked up by sweeps on the injected clock.
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { Executor } from '../db/database.ts';

const QUEUE_SETUP_LOCK = 727_003;

export type JobHandler<T> = (data: T) => Promise<void>;

export class JobQueue {
  private readonly workers = new Map<string, string>();

  private constructor(
    private readonly boss: PgBoss,
    private readonly connectionString: string,
  ) {}

  static async start(
    connectionString: string,
    logger: Logger,
    options: { maintenance: boolean },
  ): Promise<JobQueue> {
    const boss = new PgBoss({
      connectionString,
      max: 4,
      schedule: false,
      supervise: options.maintenance,
      application_name: 'tessera-jobs',
    });
    boss.on('error', (err) => {
      // The database ending our connections (a shutdown or a failover: 57P01) is news, not a fault.
      if ((err as { code?: string }).code === '57P01') {
        logger.warn({ reason: err.message }, 'job queue connection closed by the database');
      } else logger.error({ err }, 'job queue error');
    });
    await boss.start();
    return new JobQueue(boss, connectionString);
  }

  /**
   * Creates the queue unless it exists. pg-boss's create_queue takes locks on its queue table and its job
   * table in an order that deadlocks when two processes start at once on a fresh database, so creation
   * is serialised across processes with an advisory lock.
   */
  async createQueue(name: string): Promise<void> {
    const lock = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'tessera-jobs-setup',
    });
    await lock.connect();
    try {
      await lock.query('SELECT pg_advisory_lock($1)', [QUEUE_SETUP_LOCK]);
      if (!(await this.boss.getQueue(name))) {
        await this.boss.createQueue(name, { name, policy: 'standard', retryLimit: 0 });
      }
    } finally {
      await lock.end();
    }
  }

  /** Enqueues within the caller's transaction (or on its own when given the db). */
  async send<T extends object>(executor: Executor, queue: string, data: T): Promise<void> {
    await this.boss.send(queue, data, {
      db: {
        executeSql: async (text: string, values: unknown[]) =>
          executor.executeQuery(CompiledQuery.raw(text, values)),
      },
    });
  }

  async work<T extends object>(
    queue: string,
    handler: JobHandler<T>,
    options: { pollingIntervalSeconds: number },
  ) {
    const id = await this.boss.work<T>(
      queue,
      { batchSize: 8, pollingIntervalSeconds: options.pollingIntervalSeconds },
      async (jobs) => {
        await Promise.all(jobs.map((job) => handler(job.data)));
      },
    );
    this.workers.set(queue, id);
  }

  /** Wakes the queue's worker now instead of at its next poll (called after a commit that enqueued). */
  notify(queue: string): void {
    const id = this.workers.get(queue);
    if (id) this.boss.notifyWorker(id);
  }

  /** Stops the workers, letting running jobs finish for at most `timeoutMs` (pg-boss needs ≥ 1 s). */
  async stop(timeoutMs = 10_000): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: Math.max(1000, timeoutMs) });
  }
}

/** Creates pg-boss's schema without starting workers (used to prepare template databases). */
export async function installJobSchema(connectionString: string): Promise<void> {
  const boss = new PgBoss({ connectionString, max: 1, schedule: false, supervise: false });
  await boss.start();
  await boss.stop({ graceful: false, wait: true });
}
