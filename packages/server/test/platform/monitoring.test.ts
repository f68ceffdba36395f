// The operator's monitoring (ops/: Prometheus alert rules, the Grafana dashboard, compose's profile):
// promtool checks the rules and the config and runs the rules' unit tests; every metric a rule or a panel
// reads is one a running Tessera exposes; every alert names a runbook that docs/operations.md has; every
// panel reads the provisioned datasource. promtool comes from Debian's `prometheus` package (CI installs
// it and sets TESSERA_REQUIRE_PROMTOOL=1; without it here, only its part is skipped).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUES } from '../../src/platform/http/queue-metrics.ts';
import { Harness, OWN_HARNESS_TIMEOUT_MS } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

const ROOT = join(import.meta.dirname, '../../../..');
const ops = (path: string) => join(ROOT, 'ops', path);
const hasPromtool =
  process.env.TESSERA_REQUIRE_PROMTOOL === '1' ||
  ['/usr/bin/promtool', '/usr/local/bin/promtool'].some((path) => existsSync(path));

const rulesText = readFileSync(ops('prometheus/alerts.yml'), 'utf8');
const dashboard = JSON.parse(readFileSync(ops('grafana/dashboards/tessera.json'), 'utf8')) as {
  panels: {
    type: string;
    title: string;
    datasource?: { uid: string };
    targets?: { expr: string; datasource: { uid: string } }[];
  }[];
};
const expressions = [
  ...[...rulesText.matchAll(/expr: \|?\n?([\s\S]*?)\n {8}(?:for|labels):/g)].map((m) => m[1] as string),
  ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
];

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(() => h.close());
const admin = () => ({ authorization: `Bearer ${h.adminToken}` });

describe('monitoring', () => {
  it.runIf(hasPromtool)(
    'promtool: the rules and the config are valid, and the rules’ unit tests pass',
    () => {
      const promtool = (...args: string[]) =>
        execFileSync('promtool', args, { cwd: ops('prometheus'), encoding: 'utf8' });
      expect(promtool('check', 'rules', 'alerts.yml')).toMatch(/SUCCESS: 16 rules found/);
      expect(promtool('check', 'config', 'prometheus.yml')).toMatch(/is valid prometheus config file/);
      expect(promtool('test', 'rules', 'alerts.test.yml')).toMatch(/SUCCESS/);
    },
  );

  it('every metric a rule or a panel reads is one Tessera exposes', async () => {
    // Some traffic, a sweep round, so the answer is a real one.
    await h.admin('POST', '/partners', { json: { name: 'Watched' } });
    await h.advanceClock(60);
    const exposed = await (await fetch(`${h.baseUrl}/metrics`)).text();
    const names = new Set([...exposed.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    const read = new Set(
      expressions.flatMap((expr) =>
        [...expr.matchAll(/\b(tessera_[a-z0-9_]+)/g)].map((m) =>
          (m[1] as string).replace(/_(bucket|sum|count)$/, ''),
        ),
      ),
    );
    expect(read.size).toBeGreaterThan(12);
    expect([...read].filter((name) => !names.has(name))).toEqual([]);
    // The queues are read from the database at scrape time, with every queue named.
    for (const queue of QUEUES) expect(exposed).toContain(`tessera_queue_depth{queue="${queue}"} 0`);
    expect(exposed).toMatch(/tessera_sweep_last_success_timestamp_seconds\{sweep="webhook-deliveries"\} \d/);
    expect(exposed).toMatch(/tessera_db_pool_connections\{state="max"\} \d+/);
  });

  it(
    'on a fresh server’s first scrape, every series a rule or a panel reads has a sample (at 0)',
    async () => {
      const fresh = await Harness.start({ env: { TESSERA_BANK_RAIL: 'iso20022' } });
      try {
        const exposed = await (await fetch(`${fresh.baseUrl}/metrics`)).text();
        const sampled = new Set(
          [...exposed.matchAll(/^(tessera_[a-z0-9_]+?)(?:_bucket|_sum|_count)?(?:\{[^}]*\})? \S+$/gm)].map(
            (m) => m[1],
          ),
        );
        const read = new Set(
          expressions.flatMap((expr) =>
            [...expr.matchAll(/\b(tessera_[a-z0-9_]+)/g)].map((m) =>
              (m[1] as string).replace(/_(bucket|sum|count)$/, ''),
            ),
          ),
        );
        // Requests' own series are born with the first request answered, and the chains' are labelled by the
        // configured real chains (none here); nothing else may wait for an event.
        const bornLater = (name: string) =>
          name.startsWith('tessera_http_') || name.startsWith('tessera_chain_');
        expect([...read].filter((name) => !bornLater(name) && !sampled.has(name))).toEqual([]);
        for (const queue of QUEUES)
          expect(exposed).toContain(`tessera_queue_oldest_seconds{queue="${queue}"} 0`);
        expect(exposed).toContain('tessera_bank_inbox_files_total{outcome="rejected"} 0');
        expect(exposed).toContain('tessera_sweep_failures_total{sweep="payout-runs"} 0');
        expect(exposed).toContain('tessera_webhook_failures_total{api="payments",tenant=""} 0');
      } finally {
        await fresh.close();
      }
    },
    OWN_HARNESS_TIMEOUT_MS,
  );

  it('exports each merchant’s disputes of the month against its payments, fraud apart, by count and amount', async () => {
    // From the month's second day, so the payments and their disputes fall in one month.
    const now = new Date(
      (await h.request<{ now: string }>('GET', '/sandbox/clock', { headers: admin() })).body.now,
    );
    await h.advanceClock(
      Math.ceil((Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 2) - now.getTime()) / 1000),
    );
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    // Charged back as fraud (10.4) three sandbox days after capture, and as not received (13.1).
    for (const [cardNumber, amount] of [
      ['4000000000000259', '30.00'],
      ['4000000000002685', '10.00'],
      ['4111111111111111', '40.00'],
      ['4111111111111111', '20.00'],
    ] as const) {
      expect(
        (await payments(h, m, 'POST', '/order', anOrder(customerId, { cardNumber, amount }))).status,
      ).toBe(201);
    }
    await h.advanceClock(4 * 86_400);
    const exposed = await (await fetch(`${h.baseUrl}/metrics`)).text();
    const sample = (labels: string) =>
      Number(new RegExp(`^tessera_merchant_dispute[a-z_]*\\{${labels}\\} (\\S+)$`, 'm').exec(exposed)?.[1]);
    const merchant = `merchant="${m.id}"`;
    expect(sample(`${merchant},kind="all"`)).toBe(2);
    expect(sample(`${merchant},kind="fraud"`)).toBe(1);
    expect(sample(`${merchant},kind="all",basis="count",currency=""`)).toBe(0.5);
    expect(sample(`${merchant},kind="fraud",basis="count",currency=""`)).toBe(0.25);
    expect(sample(`${merchant},kind="all",basis="amount",currency="EUR"`)).toBe(0.4);
    expect(sample(`${merchant},kind="fraud",basis="amount",currency="EUR"`)).toBe(0.3);
  });

  it('every alert has a severity and a runbook in docs/operations.md', () => {
    const operations = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const anchors = new Set(
      [...operations.matchAll(/^#+ (.+)$/gm)].map((m) =>
        (m[1] as string)
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    const alerts = [...rulesText.matchAll(/- alert: (\w+)/g)].map((m) => m[1] as string);
    expect(alerts).toHaveLength(16);
    const runbooks = [...rulesText.matchAll(/runbook_url: docs\/operations\.md#(\S+)/g)].map(
      (m) => m[1] as string,
    );
    expect(runbooks).toEqual(alerts.map((alert) => alert.toLowerCase()));
    expect(runbooks.filter((anchor) => !anchors.has(anchor))).toEqual([]);
    expect([...rulesText.matchAll(/severity: (\w+)/g)].map((m) => m[1])).toHaveLength(16);
  });

  it('every panel reads the provisioned datasource', () => {
    const provisioned = readFileSync(ops('grafana/provisioning/datasources/prometheus.yml'), 'utf8');
    const uid = /uid: (\S+)/.exec(provisioned)?.[1];
    const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
    expect(panels.length).toBeGreaterThan(10);
    for (const panel of panels) {
      expect(panel.datasource?.uid, panel.title).toBe(uid);
      for (const target of panel.targets ?? []) expect(target.datasource.uid, panel.title).toBe(uid);
    }
  });
});
