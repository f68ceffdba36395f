// kill -9 in the middle of a load, on the real binary. 16 clients create payments and crypto orders,
// each with its own Idempotency-Key, retrying every error with the same key (as a careful integrator
// does). The server is killed (Node alone, then Node and its Postgres), restarted on the same data, and
// the clients carry on. Every acknowledged order exists exactly once with the id first answered, every
// key ends with an answer within seconds of the restart, and a day later the same retries run nothing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  APPROVED_CARD,
  aDataDir,
  aPaymentsMerchant,
  openDataDirDatabase,
  postmasterPid,
  ServerProcess,
} from '../harness/server-process.ts';

let data: Awaited<ReturnType<typeof aDataDir>>;
beforeAll(async () => {
  data = await aDataDir();
});
afterAll(async () => {
  await data.remove();
});

const CLIENTS = 16;

interface Tenants {
  merchantAuth: Record<string, string>;
  customerId: number;
  storeAuth: Record<string, string>;
}

interface Outcome {
  key: string;
  kind: 'payments' | 'crypto';
  /** The id of the first 201 answer, and every later answer's */
  ids: string[];
  attempts: number;
}

/** The server the clients talk to; replaced on restart. */
class Target {
  server: ServerProcess | undefined;
  isDown = false;
}

async function write(
  target: Target,
  tenants: Tenants,
  outcome: Outcome,
): Promise<{ status: number; id?: string }> {
  const server = target.server;
  if (!server || target.isDown) return { status: 0 };
  const headers = { 'idempotency-key': outcome.key };
  try {
    if (outcome.kind === 'payments') {
      const res = await server.request<{ data: { orderId: number } }>('POST', '/payments/order', {
        headers: { ...tenants.merchantAuth, ...headers },
        form: {
          amount: '12.34',
          currency: 'EUR',
          orderType: 'purchase',
          customerId: String(tenants.customerId),
          externalOrderId: outcome.key,
          ...APPROVED_CARD,
        },
      });
      return { status: res.status, ...(res.status === 201 ? { id: String(res.body.data.orderId) } : {}) };
    }
    const res = await server.request<{ data: { id: string } }>('POST', '/crypto/api/stores/orders', {
      headers: { ...tenants.storeAuth, ...headers },
      json: {
        data: {
          type: 'orders',
          attributes: {
            order: {
              reference: outcome.key,
              amount: { total: '12.34', currency: 'EUR' },
              return_urls: { return_url: 'https://shop.example/r', cancel_url: 'https://shop.example/c' },
              line_items: [{ sku: 'S', name: 'Thing', price: '12.34', currency: 'EUR', quantity: 1 }],
            },
            customer: { first_name: 'Ada', last_name: 'B', email: 'ada@example.com', country: 'RO' },
          },
        },
      },
    });
    return { status: res.status, ...(res.status === 201 ? { id: res.body.data.id } : {}) };
  } catch {
    return { status: 0 };
  }
}

/** One client: new keys while the load runs; a key is retried until it gets a 201 (with backoff). */
async function client(
  run: string,
  target: Target,
  tenants: Tenants,
  outcomes: Outcome[],
  shouldStop: () => boolean,
) {
  while (!shouldStop()) {
    const outcome: Outcome = {
      key: `${run}-${randomBytes(6).toString('hex')}`,
      kind: outcomes.length % 2 ? 'crypto' : 'payments',
      ids: [],
      attempts: 0,
    };
    outcomes.push(outcome);
    for (;;) {
      outcome.attempts++;
      const answer = await write(target, tenants, outcome);
      if (answer.id) {
        outcome.ids.push(answer.id);
        break;
      }
      if (outcome.attempts > 400)
        throw new Error(`key ${outcome.key} never answered (last ${answer.status})`);
      await new Promise((r) => setTimeout(r, answer.status === 0 ? 100 : 20));
    }
  }
}

async function setUp(server: ServerProcess): Promise<Tenants> {
  const { merchantAuth, customerId } = await aPaymentsMerchant(server, 'load');
  const store = await server.admin<{ clientId: string; clientSecret: string }>('POST', '/stores', {
    name: 'Load store',
  });
  const session = await server.request<{ data: { id: string } }>('POST', '/crypto/api/stores/session', {
    json: {
      data: {
        type: 'session',
        attributes: { client_id: store.body.clientId, client_secret: store.body.clientSecret },
      },
    },
  });
  return {
    merchantAuth,
    customerId,
    storeAuth: { authorization: `Bearer ${session.body.data.id}` },
  };
}

async function crashAndRecover(killPostgres: boolean) {
  const env = { TESSERA_DATA_DIR: data.dir };
  const target = new Target();
  target.server = await ServerProcess.start(env);
  const tenants = await setUp(target.server);
  const outcomes: Outcome[] = [];
  let stopLoad = false;
  const run = `load${killPostgres ? 'pg' : 'node'}`;
  const clients = Array.from({ length: CLIENTS }, () =>
    client(run, target, tenants, outcomes, () => stopLoad),
  );

  // Let the load run, then kill the server mid-flight.
  while (outcomes.filter((o) => o.ids.length > 0).length < 60) await new Promise((r) => setTimeout(r, 20));
  target.isDown = true;
  target.server.child.kill('SIGKILL');
  if (killPostgres) {
    const pid = await postmasterPid(data.dir);
    if (pid) process.kill(pid, 'SIGKILL');
  }
  await target.server.exited();
  const inFlight = outcomes.filter((o) => o.ids.length === 0).map((o) => o.key);

  const restartedAt = Date.now();
  target.server = await ServerProcess.start(env);
  target.isDown = false;
  const restartMs = Date.now() - restartedAt;
  // Clients finish the keys they had in flight; a little more load after the restart.
  while (inFlight.some((key) => outcomes.find((o) => o.key === key)?.ids.length === 0)) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const recoveredMs = Date.now() - restartedAt;
  stopLoad = true;
  await Promise.all(clients);

  // Every key again: the same answer (a replay), never a second order.
  for (const outcome of outcomes) {
    const again = await write(target, tenants, outcome);
    expect(again.status).toBe(201);
    outcome.ids.push(again.id ?? '');
  }
  const db = await openDataDirDatabase(data.dir);
  try {
    for (const outcome of outcomes) {
      expect(new Set(outcome.ids).size, `key ${outcome.key}: ${outcome.ids.join(', ')}`).toBe(1);
    }
    const payments = await db.query<{ external_order_id: string; n: string }>(
      `SELECT external_order_id, count(*) AS n FROM payments_orders WHERE external_order_id LIKE $1 GROUP BY 1`,
      [`${run}-%`],
    );
    const crypto = await db.query<{ reference: string; n: string }>(
      `SELECT reference, count(*) AS n FROM crypto_orders WHERE reference LIKE $1 GROUP BY 1`,
      [`${run}-%`],
    );
    const counts = new Map([
      ...payments.rows.map((r) => [r.external_order_id, Number(r.n)] as const),
      ...crypto.rows.map((r) => [r.reference, Number(r.n)] as const),
    ]);
    for (const outcome of outcomes) expect(counts.get(outcome.key), outcome.key).toBe(1);
    expect(counts.size).toBe(outcomes.length);
    const unbalanced = await db.query(
      `SELECT asset FROM ledger_entries GROUP BY asset HAVING sum(amount) <> 0`,
    );
    expect(unbalanced.rows).toEqual([]);

    // A day later the replay window is over: the same retries are refused, and run nothing.
    const advanced = await target.server.request('POST', '/sandbox/clock/advance', {
      headers: { authorization: `Bearer ${target.server.adminToken}` },
      json: { seconds: 25 * 3600 },
    });
    expect(advanced.status).toBe(200);
    for (const outcome of outcomes.slice(0, 20)) {
      const late = await write(target, tenants, outcome);
      expect(late.status).toBe(422);
    }
    const after = await db.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM payments_orders WHERE external_order_id LIKE $1) + (SELECT count(*) FROM crypto_orders WHERE reference LIKE $1) AS n`,
      [`${run}-%`],
    );
    expect(Number(after.rows[0]?.n)).toBe(outcomes.length);
  } finally {
    await db.end();
    await target.server.stop();
  }
  return { writes: outcomes.length, inFlight: inFlight.length, restartMs, recoveredMs };
}

describe('kill -9 under load', () => {
  it('of Node alone: every acknowledged write exactly once, every in-flight key answered after restart', async () => {
    const figures = await crashAndRecover(false);
    expect(figures.inFlight).toBeGreaterThan(0);
    expect(figures.recoveredMs - figures.restartMs).toBeLessThan(5000);
    process.stdout.write(`crash (Node): ${JSON.stringify(figures)}\n`);
  }, 180_000);

  it('of Node and Postgres: the same after Postgres recovers', async () => {
    const figures = await crashAndRecover(true);
    expect(figures.recoveredMs - figures.restartMs).toBeLessThan(5000);
    process.stdout.write(`crash (Node and Postgres): ${JSON.stringify(figures)}\n`);
  }, 180_000);
});
