// Velocity windows (docs/risk.md, Velocity). A tenant's are whole minutes that ended at least a minute
// before the signal's own, summed from minute roll-ups, never from a scan of the tenant's traffic: through
// the payments API on the sandbox clock, when a charge starts to count, what a decision records, what the
// roll-up keeps and for how long. And a backtest's history (its window functions over a tenant's minutes)
// against counts made by hand over random histories in two currencies (a key's windows are the backtest
// property's, test/risk/backtest.test.ts).
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historySql } from '../../src/platform/risk/backtest-history.ts';
import type { VelocityFeature, VelocityWindow } from '../../src/platform/risk/decision-points.ts';
import { featureColumn } from '../../src/platform/risk/rule-sql.ts';
import { TenantWindows, tenantWindowMinutes } from '../../src/platform/risk/tenant-windows.ts';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

interface Decision {
  objectId: string;
  attributes: { velocity: { tenant: Record<string, number> } };
}

describe('a tenant’s windows, live', () => {
  it('count whole minutes from the minute before last: a burst acts two minutes on, and leaves the window ten minutes after', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const rule = await h.admin<{ id: string }>('POST', '/risk/rules', {
      json: {
        name: 'a burst at the merchant',
        scope: { kind: 'merchant', id: String(m.id) },
        decisionPoint: 'payments.charge',
        expression: 'velocity.tenant.count_10m >= 3 && velocity.tenant.sum_1h >= 300',
        action: 'block',
      },
    });
    expect(rule.status).toBe(201);
    // Rolled up when the rule was saved, before its first decision: the frontier stands at the minute before last
    const saved = await h.services.db
      .selectFrom('risk_signal_minutes_frontier')
      .select('through')
      .where('tenant', '=', `merchant:${m.id}`)
      .executeTakeFirst();
    const atSave = Math.floor((await h.services.clock.now()).getTime() / 60_000);
    expect(saved?.through.getTime()).toBe((atSave - 1) * 60_000);
    // To the start of a minute, so the steps below land in known minutes
    const seconds = (await h.services.clock.now()).getUTCSeconds();
    await h.advanceClock(60 - seconds);
    const charge = async () => payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '1.00' }));
    const approved = (r: Awaited<ReturnType<typeof charge>>) =>
      r.body.data?.transactionStatus === 'complete-ok';

    for (let i = 0; i < 3; i++) expect(approved(await charge())).toBe(true);
    // The same minute and the next: the burst is not counted yet
    expect(approved(await charge())).toBe(true);
    await h.advanceClock(60);
    expect(approved(await charge())).toBe(true);
    // Two minutes on, the first minute's four charges count
    await h.advanceClock(60);
    const blocked = await charge();
    expect(approved(blocked)).toBe(false);
    const decisions = await h.admin<{ data: Decision[] }>('GET', `/risk/decisions?ruleId=${rule.body.id}`);
    expect(decisions.body.data[0]?.attributes.velocity.tenant).toMatchObject({ count_10m: 4, sum_1h: 400 });
    // Ten minutes after the burst's minute (and the minute after it, one charge) it has left the window
    await h.advanceClock(10 * 60);
    expect(approved(await charge())).toBe(true);

    // Rolled up once per minute into risk_signal_minutes, with the frontier at the last window's end
    const minutes = await h.services.db
      .selectFrom('risk_signal_minutes')
      .select(['minute', 'signals', 'amount', 'declines'])
      .where('tenant', '=', `merchant:${m.id}`)
      .orderBy('minute')
      .execute();
    expect(minutes.map((r) => [Number(r.signals), r.amount])).toEqual([
      [4, '400'],
      [1, '100'],
      [1, '100'],
    ]);
    const frontier = await h.services.db
      .selectFrom('risk_signal_minutes_frontier')
      .select('through')
      .where('tenant', '=', `merchant:${m.id}`)
      .executeTakeFirstOrThrow();
    const now = await h.services.clock.now();
    expect(frontier.through.getTime()).toBe((Math.floor(now.getTime() / 60_000) - 1) * 60_000);

    // Kept a day past the longest window, then deleted by the risk history's retention sweep
    const swept = await h.advanceClock(32 * 86_400);
    expect(swept.processed['risk-history-retention']).toBeGreaterThanOrEqual(3);
    const left = await h.services.db
      .selectFrom('risk_signal_minutes')
      .select('minute')
      .where('tenant', '=', `merchant:${m.id}`)
      .execute();
    expect(left).toEqual([]);
  });
});

describe('a key’s first sighting', () => {
  it('is whole days since the key’s first signal at the merchant, 0 for a key never seen; on the order’s one read and in the decision record', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const rule = await h.admin<{ id: string }>('POST', '/risk/rules', {
      json: {
        name: 'a card known for two days, a new email',
        scope: { kind: 'merchant', id: String(m.id) },
        decisionPoint: 'payments.charge',
        expression: 'velocity.card.first_seen_days >= 2 && velocity.ip.first_seen_days == 0',
        action: 'review',
        mode: 'shadow',
      },
    });
    expect(rule.status).toBe(201);
    const charge = (cardNumber: string, ip: string) =>
      payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '1.00', cardNumber, ip }));
    await charge('4111111111111111', '192.0.2.10');
    await h.advanceClock(86_400 + 3_600);
    await charge('4111111111111111', '192.0.2.10');
    await h.advanceClock(86_400);
    // Two days and an hour after the card's first charge, from an IP never seen: matched
    const matched = await charge('4111111111111111', '192.0.2.11');
    // A card never seen: not matched
    await charge('5555555555554444', '192.0.2.12');
    const decisions = await h.admin<{
      data: { objectId: string; attributes: { velocity: Record<string, Record<string, number>> } }[];
    }>('GET', `/risk/decisions?ruleId=${rule.body.id}`);
    expect(decisions.body.data.map((d) => d.objectId)).toEqual([String(matched.body.data.transactionId)]);
    expect(decisions.body.data[0]?.attributes.velocity).toEqual({
      card: { first_seen_days: 2 },
      ip: { first_seen_days: 0 },
    });
  });
});

describe('a tenant’s windows, a minute on', () => {
  it('read by difference (the minutes that entered, less those that left) equal the windows read whole', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const features: VelocityFeature[] = [
      { key: 'tenant', metric: 'count', window: '10m' },
      { key: 'tenant', metric: 'sum', window: '10m' },
      { key: 'tenant', metric: 'count', window: '1h' },
      { key: 'tenant', metric: 'sum', window: '24h' },
    ];
    const stepping = new TenantWindows();
    const seen = new Set<string>();
    for (let i = 0; i < 16; i++) {
      // A charge or two each step, 40 to 700 seconds apart: minutes enter and leave every window
      for (let c = 0; c < 1 + (i % 2); c++) {
        await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: `${i + 1}.00` }));
      }
      await h.advanceClock(i === 9 ? 700 : 40);
      const probe = {
        tenant: `merchant:${m.id}`,
        point: 'payments.charge' as const,
        at: await h.services.clock.now(),
        currency: 'EUR',
      };
      const stepped = await stepping.read(h.services.db, probe, features);
      const whole = await new TenantWindows().read(h.services.db, probe, features);
      expect(stepped).toEqual(whole);
      seen.add(JSON.stringify(stepped, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
    }
    // The windows moved: not one answer all along
    expect(seen.size).toBeGreaterThan(5);
  });
});

describe('a tenant’s windows over a history (a backtest’s)', () => {
  const FEATURES: VelocityFeature[] = [
    { key: 'tenant', metric: 'count', window: '10m' },
    { key: 'tenant', metric: 'sum', window: '1h' },
    { key: 'tenant', metric: 'count', window: '24h' },
  ];
  let histories = 0;
  it('sum what a count by hand over the whole minutes before each signal finds', async () => {
    const signal = fc.record({
      wait: fc.constantFrom(0, 1_000, 30_000, 61_000, 600_000, 3_000_000),
      amount: fc.bigInt({ min: 1n, max: 10_000n }),
      currency: fc.constantFrom('EUR', 'USD'),
      declined: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(signal, { minLength: 1, maxLength: 40 }), async (steps) => {
        const tenant = `merchant:history-${++histories}`;
        const seen: { at: Date; amount: bigint; currency: string }[] = [];
        let t = Date.UTC(2026, 0, 1, 0, 0, 17);
        for (const s of steps) {
          t += s.wait;
          seen.push({ at: new Date(t), amount: s.amount, currency: s.currency });
        }
        // The history in one statement
        await sql`INSERT INTO risk_signals (decision_point, tenant, object_id, at, amount, currency, declined, attributes)
          SELECT 'payments.charge', ${tenant}, 'o' || i, at, amount, currency, declined, '{}'
          FROM unnest(${seen.map((x) => x.at)}::timestamptz[], ${seen.map((x) => x.amount.toString())}::numeric[],
            ${seen.map((x) => x.currency)}::text[], ${steps.map((x) => x.declined)}::boolean[])
            WITH ORDINALITY AS u(at, amount, currency, declined, i) ORDER BY i`.execute(h.services.db);
        const from = seen[0]?.at as Date;
        const { rows } = await sql<Record<string, string>>`SELECT * FROM (${historySql({
          tenant,
          point: 'payments.charge',
          from,
          to: new Date(t + 1),
          features: FEATURES,
          columns: [],
        })}) h ORDER BY id`.execute(h.services.db);
        expect(rows).toHaveLength(steps.length);
        rows.forEach((row, i) => {
          const { at, currency } = seen[i] as { at: Date; currency: string };
          const inWindow = (window: VelocityWindow) => {
            const { from, to } = tenantWindowMinutes(at, window);
            return seen.filter((x) => {
              const minute = Math.floor(x.at.getTime() / 60_000);
              return minute >= from && minute < to;
            });
          };
          expect({
            count_10m: BigInt(row[featureColumn(FEATURES[0] as VelocityFeature)] as string),
            sum_1h: BigInt(row[featureColumn(FEATURES[1] as VelocityFeature)] as string),
            count_24h: BigInt(row[featureColumn(FEATURES[2] as VelocityFeature)] as string),
          }).toEqual({
            count_10m: BigInt(inWindow('10m').length),
            sum_1h: inWindow('1h')
              .filter((x) => x.currency === currency)
              .reduce((sum, x) => sum + x.amount, 0n),
            count_24h: BigInt(inWindow('24h').length),
          });
        });
      }),
      { numRuns: Number(process.env.TESSERA_PROPERTY_RUNS ?? 10) * 5 },
    );
  });
});
