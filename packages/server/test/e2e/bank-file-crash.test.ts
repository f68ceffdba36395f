// kill -9 while payouts are written to bank files (docs/payouts.md, Bank files), on the real binary: a
// merchant pays out one euro at a time while the payout sweep writes a pain.001 for what is pending every
// 50 ms; the server is killed at a random moment, three times, and restarted on the same data. At the end
// every payout is in transit in exactly one file of the outbox, every file validates against the XSD and
// is recorded written with exactly its payouts, and `reconcile` is clean: nothing was paid twice.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xsdProblems } from '../harness/bank-files.ts';
import { eventually } from '../harness/harness.ts';
import { aDataDir, aManualPayoutSite, ServerProcess } from '../harness/server-process.ts';

let data: Awaited<ReturnType<typeof aDataDir>>;
beforeAll(async () => {
  data = await aDataDir();
});
afterAll(async () => {
  await data.remove();
});

describe('a kill -9 while bank files are written', () => {
  it('never puts a payout in two files, nor leaves one out', async () => {
    const outbox = join(data.dir, 'bank', 'outbox');
    const env = {
      TESSERA_DATA_DIR: data.dir,
      PORT: '0',
      TESSERA_BANK_RAIL: 'iso20022',
      TESSERA_SWEEP_INTERVAL_MS: '50',
      TESSERA_RATE_LIMIT_PER_MINUTE: '100000',
    };
    let server = await ServerProcess.start(env);
    try {
      const { auth } = await aManualPayoutSite(server, 'Crash shop', '500.00');

      let acknowledged = 0;
      for (let round = 0; round < 3; round++) {
        const killAt = Date.now() + 300 + Math.floor(Math.random() * 600);
        while (Date.now() < killAt) {
          const paid = await server.request('POST', '/payments/payout', {
            headers: auth,
            form: { currency: 'EUR', amount: '1.00' },
          });
          if (paid.status === 201) acknowledged++;
        }
        await server.stop('SIGKILL');
        server = await ServerProcess.start(env);
      }

      const allPayouts = async () => {
        const all: { id: string; status: string }[] = [];
        for (let after = ''; ; ) {
          const page = await server.request<{ data: { id: string; status: string }[]; hasMore: boolean }>(
            'GET',
            `/payments/payout?perPage=100${after ? `&startingAfter=${after}` : ''}`,
            { headers: auth },
          );
          all.push(...page.body.data);
          if (!page.body.hasMore) return all;
          after = page.body.data.at(-1)?.id ?? '';
        }
      };
      const payouts = await eventually(async () => {
        const listed = await allPayouts();
        return listed.every((p) => p.status === 'in_transit') ? listed : undefined;
      }, 30_000);
      expect(payouts.length).toBeGreaterThanOrEqual(acknowledged);
      const files = (await readdir(outbox)).filter((f) => f.endsWith('.xml'));
      const seen = new Map<string, number>();
      for (const file of files) {
        expect(xsdProblems(join(outbox, file), 'pain.001.001.09.xsd'), file).toBe('');
        for (const [, id] of (await readFile(join(outbox, file), 'utf8')).matchAll(
          /<EndToEndId>(po_\w+)<\/EndToEndId>/g,
        )) {
          seen.set(id as string, (seen.get(id as string) ?? 0) + 1);
        }
      }
      expect([...seen.values()].filter((n) => n !== 1)).toEqual([]);
      expect([...seen.keys()].sort()).toEqual(payouts.map((p) => p.id).sort());
      const today = (
        await server.request<{ now: string }>('GET', '/sandbox/clock', {
          headers: { authorization: `Bearer ${server.adminToken}` },
        })
      ).body.now.slice(0, 10);
      const books = await server.admin<{
        clean: boolean;
        findings: unknown[];
        checked: { bank_files: number };
      }>('GET', `/reconcile?date=${today}`);
      expect(books.body.findings).toEqual([]);
      expect(books.body.checked.bank_files).toBe(files.length);
    } finally {
      await server.stop();
    }
  }, 240_000);
});
