// kill -9 while a large backlog is paid out (docs/payouts.md, Payouts of a large backlog), on the real
// binary: a site on a manual schedule holds 100,000 unpaid balance transactions; a payout of everything is
// asked for, and the server is killed once two batches of 10,000 have committed, then again, after a
// restart, once five have. The payout runs on from the last batch committed each time. At the end one
// payout pays every item exactly once, its amount is their sum, nothing is left being made, and
// `reconcile` is clean.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedBacklog } from '../harness/backlog.ts';
import { eventually } from '../harness/harness.ts';
import {
  aDataDir,
  aManualPayoutSite,
  dataDirDatabaseUrl,
  openDataDirDatabase,
  ServerProcess,
} from '../harness/server-process.ts';

const ITEMS = 100_000;
let data: Awaited<ReturnType<typeof aDataDir>>;
beforeAll(async () => {
  data = await aDataDir();
});
afterAll(async () => {
  await data.remove();
});

describe('a kill -9 while a backlog is paid in batches', () => {
  it('pays every item exactly once, by one payout', async () => {
    const env = {
      TESSERA_DATA_DIR: data.dir,
      PORT: '0',
      TESSERA_SWEEP_INTERVAL_MS: '50',
      TESSERA_RATE_LIMIT_PER_MINUTE: '100000',
    };
    let server = await ServerProcess.start(env);
    // A connection per question: the embedded Postgres restarts with the server.
    const query = async <R extends object>(text: string, values: unknown[]) => {
      const db = await openDataDirDatabase(data.dir);
      try {
        return (await db.query<R>(text, values)).rows;
      } finally {
        await db.end();
      }
    };
    try {
      const { siteId, auth } = await aManualPayoutSite(server, 'Backlog shop', '10.00');
      const owner = `site:${siteId}`;
      const clock = await server.request<{ now: string }>('GET', '/sandbox/clock', {
        headers: { authorization: `Bearer ${server.adminToken}` },
      });
      const { total } = await seedBacklog(
        await dataDirDatabaseUrl(data.dir),
        siteId,
        ITEMS,
        new Date(clock.body.now),
      );
      const itemsMarked = async () => {
        const rows = await query<{ items: string }>(
          'SELECT items::text FROM payout_assemblies WHERE owner = $1',
          [owner],
        );
        return Number(rows[0]?.items ?? 0);
      };

      // Asked for, then killed mid-way; the request's connection dies with the process.
      const asked = server
        .request('POST', '/payments/payout', { headers: auth, form: { currency: 'EUR' } })
        .catch(() => undefined);
      await eventually(async () => ((await itemsMarked()) >= 20_000 ? true : undefined), 120_000);
      await server.stop('SIGKILL');
      await asked;
      const afterFirst = await itemsMarked();
      expect(afterFirst).toBeGreaterThanOrEqual(20_000);
      expect(afterFirst).toBeLessThan(ITEMS);
      // The payout run's sweep goes on from the last batch committed; killed again.
      server = await ServerProcess.start(env);
      await eventually(async () => ((await itemsMarked()) >= 50_000 ? true : undefined), 120_000);
      await server.stop('SIGKILL');
      server = await ServerProcess.start(env);

      const payouts = await eventually(async () => {
        const made = await query<{ id: string; amount: string }>(
          'SELECT id, amount::text FROM payouts WHERE owner = $1',
          [owner],
        );
        const making = await query('SELECT 1 FROM payout_assemblies WHERE owner = $1', [owner]);
        return made.length > 0 && making.length === 0 ? made : undefined;
      }, 120_000);
      expect(payouts).toHaveLength(1);
      const [payout] = payouts as [{ id: string; amount: string }];
      expect(payout.amount).toBe((total + 1000n).toString());
      const items = await query<{ payout_id: string | null; n: string; net: string }>(
        `SELECT payout_id, count(*)::text AS n, sum(net)::text AS net FROM balance_transactions
         WHERE owner = $1 AND type <> 'payout' GROUP BY payout_id`,
        [owner],
      );
      // Every item (the seeded ones and the order's capture) carries the one payout's id; none is unpaid.
      expect(items).toEqual([
        { payout_id: payout.id, n: String(ITEMS + 1), net: (total + 1000n).toString() },
      ]);
      const books = await server.admin<{ findings: unknown[] }>('GET', '/reconcile');
      expect(books.body.findings).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 300_000);
});
