// The queues an operator watches, read from the database when Prometheus scrapes (not counted on every
// write): webhook deliveries due and waiting for a down endpoint, mail due, payouts waiting for a bank
// file, compliance cases open and re-screens under way, how far the chain scanner is behind the node's head, and how full the connection pool is. Each
// count reads a partial index and stops at COUNT_CAP, so a scrape stays cheap however large a backlog
// grows; a scrape that cannot reach the database keeps the last values rather than failing.
import { sql } from 'kysely';
import type pg from 'pg';
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock/clock.ts';
import type { Db } from '../db/database.ts';

const COUNT_CAP = 100_000;
/** The queues read, each exported from the first scrape at 0 */
export const QUEUES = [
  'webhook_due',
  'webhook_waiting',
  'mail_due',
  'payouts_awaiting_file',
  'compliance_cases_open',
  'sanctions_rescreen',
] as const;

export interface QueueSources {
  db: Db;
  pool: pg.Pool;
  poolMax: number;
  clock: Clock;
  /** Each real chain's head as its scanner last saw it */
  chainHeads: () => { network: string; head: bigint }[];
}

interface QueueRow {
  queue: string;
  depth: string;
  oldest: Date | null;
}

export function registerQueueMetrics(registry: Registry, sources: QueueSources): void {
  // Both gauges are read by one query at scrape time. Prometheus's client collects every metric at
  // once, so each gauge's collect awaits the same read (one query a scrape) and is serialized after it:
  // set from another gauge's collect, a value went out a scrape late, and not at all on a fresh
  // server's first scrape. Known queues start at 0.
  let reading: Promise<void> | undefined;
  const read = () => {
    reading ??= readQueues().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const depth = new Gauge({
    name: 'tessera_queue_depth',
    help: `Items due in each queue (webhook_due, webhook_waiting, mail_due, payouts_awaiting_file, compliance_cases_open, sanctions_rescreen; counted up to ${COUNT_CAP})`,
    labelNames: ['queue'],
    registers: [registry],
    collect: read,
  });
  const oldest = new Gauge({
    name: 'tessera_queue_oldest_seconds',
    help: 'How long the oldest due item of each queue has waited (0 when none is due)',
    labelNames: ['queue'],
    registers: [registry],
    collect: read,
  });
  for (const queue of QUEUES) {
    oldest.set({ queue }, 0);
    depth.set({ queue }, 0);
  }
  async function readQueues(): Promise<void> {
    const now = sources.clock.now();
    try {
      const { rows } = await sql<QueueRow>`
        SELECT 'webhook_due' AS queue,
               (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries
                 WHERE status = 'pending' AND next_attempt_at <= ${now} LIMIT ${COUNT_CAP}) d)::text AS depth,
               (SELECT min(next_attempt_at) FROM webhook_deliveries
                 WHERE status = 'pending' AND next_attempt_at <= ${now}) AS oldest
        UNION ALL
        SELECT 'webhook_waiting',
               (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries
                 WHERE status = 'waiting' LIMIT ${COUNT_CAP}) d)::text,
               (SELECT min(created_at) FROM webhook_deliveries WHERE status = 'waiting')
        UNION ALL
        SELECT 'mail_due',
               (SELECT count(*) FROM (SELECT 1 FROM outbound_mail
                 WHERE status = 'pending' AND next_attempt_at <= ${now} LIMIT ${COUNT_CAP}) d)::text,
               (SELECT min(next_attempt_at) FROM outbound_mail
                 WHERE status = 'pending' AND next_attempt_at <= ${now})
        UNION ALL
        SELECT 'payouts_awaiting_file',
               (SELECT count(*) FROM (SELECT 1 FROM payouts
                 WHERE status = 'pending' AND bank_file_id IS NULL LIMIT ${COUNT_CAP}) d)::text,
               (SELECT min(created_at) FROM payouts WHERE status = 'pending' AND bank_file_id IS NULL)
        UNION ALL
        SELECT 'compliance_cases_open',
               (SELECT count(*) FROM (SELECT 1 FROM compliance_cases
                 WHERE status = 'open' LIMIT ${COUNT_CAP}) d)::text,
               (SELECT min(opened_at) FROM compliance_cases WHERE status = 'open')
        UNION ALL
        SELECT 'sanctions_rescreen',
               (SELECT count(*) FROM compliance_rescreens WHERE finished_at IS NULL)::text,
               (SELECT min(started_at) FROM compliance_rescreens WHERE finished_at IS NULL)`.execute(
        sources.db,
      );
      for (const row of rows) {
        depth.set({ queue: row.queue }, Number(row.depth));
        const waited = row.oldest ? (now.getTime() - new Date(row.oldest).getTime()) / 1000 : 0;
        oldest.set({ queue: row.queue }, Math.max(0, waited));
      }
    } catch {
      // The database is unreachable: readiness says so; the last values stay.
    }
  }
  new Gauge({
    name: 'tessera_db_pool_connections',
    help: 'Connections of this process’s pool: total, idle, and requests waiting for one; max is the pool’s size',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, sources.pool.totalCount);
      this.set({ state: 'idle' }, sources.pool.idleCount);
      this.set({ state: 'waiting' }, sources.pool.waitingCount);
      this.set({ state: 'max' }, sources.poolMax);
    },
  });
  const head = new Gauge({
    name: 'tessera_chain_head_block',
    help: 'The chain node’s head, as the scanner last saw it',
    labelNames: ['network'],
    registers: [registry],
  });
  new Gauge({
    name: 'tessera_chain_scanned_block',
    help: 'The last block the chain scanner has processed',
    labelNames: ['network'],
    registers: [registry],
    async collect() {
      for (const chain of sources.chainHeads()) head.set({ network: chain.network }, Number(chain.head));
      try {
        const rows = await sources.db
          .selectFrom('evm_scan_state')
          .select(['network', 'block_number'])
          .execute();
        for (const row of rows) this.set({ network: row.network }, Number(row.block_number));
      } catch {
        // as above
      }
    },
  });
}
