// A Postgres failover under load, on the real binary: Tessera talks to pgbouncer in front of a primary
// with a synchronous standby. Clients create payments orders (each a ledger posting), each with its own
// Idempotency-Key, retrying errors with the same key. The primary's machine dies (kill -9 of every
// Postgres process), the standby is promoted and pgbouncer repointed. While no primary is reachable
// Tessera answers 503 with Retry-After, never a 500; afterwards every acknowledged order is on the new
// primary exactly once, with the id first answered, and the ledger balances. `npm run test:failover`.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVED_CARD, aDataDir, aPaymentsMerchant, ServerProcess } from '../harness/server-process.ts';
import { HaCluster, haveHaTools } from './pg-cluster.ts';

const CLIENTS = 8;

interface Outcome {
  key: string;
  ids: string[];
}

interface Answers {
  /** Every answer that was not a 201, by status (0: no HTTP answer at all) */
  statuses: Map<number, number>;
  /** 503s without Retry-After */
  withoutRetryAfter: number;
}

const tools = await haveHaTools();
if (!tools && process.env.TESSERA_REQUIRE_FAILOVER === '1') {
  throw new Error('the failover test needs Debian PostgreSQL 15 and pgbouncer (.ci/run installs them)');
}

describe.skipIf(!tools)('Postgres failover under load', () => {
  let cluster: HaCluster;
  let data: Awaited<ReturnType<typeof aDataDir>>;
  let server: ServerProcess;

  beforeAll(async () => {
    cluster = await HaCluster.start();
    data = await aDataDir();
    server = await ServerProcess.start({
      DATABASE_URL: cluster.databaseUrl,
      TESSERA_DATA_DIR: data.dir,
      // The clients retry fast; the load is not what is under test.
      TESSERA_RATE_LIMIT_PER_MINUTE: '1000000',
    });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await cluster?.stop();
    await data?.remove();
  });

  it('loses no acknowledged write and answers 503 with Retry-After while no primary is reachable', async () => {
    const { merchantAuth: auth, customerId: customer } = await aPaymentsMerchant(server, 'failover');
    const customerId = String(customer);

    const answers: Answers = { statuses: new Map(), withoutRetryAfter: 0 };
    const order = async (outcome: Outcome): Promise<string | undefined> => {
      try {
        const res = await server.request<{ data: { orderId: number } }>('POST', '/payments/order', {
          headers: { ...auth, 'idempotency-key': outcome.key },
          form: {
            amount: '12.34',
            currency: 'EUR',
            orderType: 'purchase',
            customerId,
            externalOrderId: outcome.key,
            ...APPROVED_CARD,
          },
        });
        if (res.status === 201) return String(res.body.data.orderId);
        answers.statuses.set(res.status, (answers.statuses.get(res.status) ?? 0) + 1);
        if (res.status === 503 && !res.headers.get('retry-after')) answers.withoutRetryAfter++;
      } catch {
        answers.statuses.set(0, (answers.statuses.get(0) ?? 0) + 1);
      }
      return undefined;
    };

    const outcomes: Outcome[] = [];
    let stop = false;
    const client = async () => {
      while (!stop) {
        const outcome: Outcome = { key: `fo-${randomBytes(6).toString('hex')}`, ids: [] };
        outcomes.push(outcome);
        for (let attempt = 1; ; attempt++) {
          const id = await order(outcome);
          if (id) {
            outcome.ids.push(id);
            break;
          }
          if (attempt > 600) {
            throw new Error(
              `key ${outcome.key} never answered: ${JSON.stringify(Object.fromEntries(answers.statuses))}\n${server.output().slice(-4000)}`,
            );
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const readiness = async () =>
      (await server.request('GET', '/readyz').catch(() => ({ status: 0 }))).status;
    const acknowledged = () => outcomes.filter((o) => o.ids.length > 0).length;
    const load = Array.from({ length: CLIENTS }, client);

    while (acknowledged() < 80) await new Promise((r) => setTimeout(r, 20));
    await cluster.killPrimary();
    const killedAt = Date.now();
    const beforeFailover = acknowledged();
    // While no primary is reachable, readiness says so (a load balancer stops sending traffic here)...
    let unready = 0;
    while (unready !== 503 && Date.now() - killedAt < 10_000) unready = await readiness();
    expect(unready).toBe(503);
    // ...for as long as a failover manager takes to decide the primary is gone.
    await new Promise((r) => setTimeout(r, 1500));
    const failoverMs = await cluster.failOver();
    // Every key in flight at the failover is answered, then a little more load on the new primary.
    const inFlight = outcomes.filter((o) => o.ids.length === 0);
    while (inFlight.some((o) => o.ids.length === 0)) await new Promise((r) => setTimeout(r, 20));
    const recoveredMs = Date.now() - killedAt;
    const target = acknowledged() + 40;
    while (acknowledged() < target) await new Promise((r) => setTimeout(r, 20));
    stop = true;
    await Promise.all(load);

    // Every key again: the same order (a replay), never a second one.
    for (const outcome of outcomes) {
      const again = await order(outcome);
      expect(again, outcome.key).toBe(outcome.ids[0]);
    }
    const db = new pg.Client({ connectionString: cluster.nodeUrl(cluster.primary) });
    await db.connect();
    try {
      const rows = await db.query<{ external_order_id: string; id: string; n: string }>(
        `SELECT external_order_id, min(id)::text AS id, count(*) AS n FROM payments_orders
          WHERE external_order_id LIKE 'fo-%' GROUP BY 1`,
      );
      const onPrimary = new Map(rows.rows.map((r) => [r.external_order_id, r]));
      for (const outcome of outcomes) {
        expect(onPrimary.get(outcome.key)?.n, outcome.key).toBe('1');
        expect(onPrimary.get(outcome.key)?.id, outcome.key).toBe(outcome.ids[0]);
      }
      expect(onPrimary.size).toBe(outcomes.length);
      const unbalanced = await db.query(
        'SELECT asset FROM ledger_entries GROUP BY asset HAVING sum(amount) <> 0',
      );
      expect(unbalanced.rows).toEqual([]);
      const negative = await db.query(
        'SELECT id FROM ledger_accounts WHERE is_bounded AND (posted < 0 OR posted - pending_debits < 0)',
      );
      expect(negative.rows).toEqual([]);
    } finally {
      await db.end();
    }

    // While no primary was reachable: 503 with Retry-After (or, for a request cut mid-flight, no answer),
    // never a 500; and readiness is back.
    const statuses = Object.fromEntries(answers.statuses);
    expect(
      Object.keys(statuses).filter((s) => s !== '503' && s !== '0'),
      JSON.stringify(statuses),
    ).toEqual([]);
    expect(answers.statuses.get(503) ?? 0).toBeGreaterThan(0);
    expect(answers.withoutRetryAfter).toBe(0);
    expect(await readiness()).toBe(200);
    process.stdout.write(
      `failover: ${JSON.stringify({ orders: outcomes.length, beforeFailover, inFlight: inFlight.length, failoverMs, recoveredMs, statuses })}\n`,
    );
  }, 180_000);
});
