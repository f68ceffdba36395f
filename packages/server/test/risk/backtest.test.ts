// Backtests (docs/risk.md, Backtests), through the admin API: a draft rule over a merchant's real history
// matches exactly what the same rule, written in shadow over that period, decided live — velocity as it
// stood at each charge included (a property over random histories) — and disputes are its labels.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCustomer, aMerchant, anOrder, payments } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  // A backtest may take three connections: the property cuts its periods into three slices
  h = await Harness.start({ env: { TESSERA_BACKTEST_PARTS: '3' } });
});
afterAll(async () => {
  await h.close();
});

interface Backtest {
  evaluated: number;
  matched: number;
  matchedAmounts: Record<string, string>;
  disputed: { matched: number; all: number };
  fraud: { matched: number; all: number };
  sample: { objectId: string; amount: string }[];
  judgedIn: 'database' | 'process';
  error?: { field?: string; message: string; details?: Record<string, number> };
}

const RUNS = Number(process.env.TESSERA_PROPERTY_RUNS ?? 3);
const now = async () => h.services.clock.now();

describe('a backtest', () => {
  it('matches what the rule, in shadow over the same period, decided live (random histories)', async () => {
    const IPS = ['192.0.2.1', '192.0.2.2', '192.0.2.3'];
    // Approved cards, and an amount the sandbox declines (0.05) so declines count too.
    const CARDS = ['4111111111111111', '5555555555554444', '4242424242424242'];
    const step = fc.record({
      // An order with no IP: a key the signal lacks counts 0 (its first sighting too)
      ip: fc.constantFrom(...IPS, undefined),
      card: fc.constantFrom(...CARDS),
      amount: fc.constantFrom('1.00', '0.05', '20.00', '7.50'),
      // Steps across whole minutes too: a tenant's windows are whole minutes (docs/risk.md)
      // and days: a card's first sighting is counted in whole days
      wait: fc.constantFrom(0, 0, 1, 30, 61, 90, 400, 3_599, 3_600, 4_000, 50_000),
    });
    const expression = fc
      .record({
        count: fc.integer({ min: 1, max: 4 }),
        sum: fc.integer({ min: 500, max: 4_000 }),
        declines: fc.integer({ min: 1, max: 2 }),
        tenant: fc.integer({ min: 2, max: 6 }),
        days: fc.integer({ min: 1, max: 2 }),
        // A rule without the tenant's windows reads no minutes before the period: only the keys' windows
        withTenant: fc.boolean(),
        // A rule that reads only the IP's declines counts them from the declined signals outward
        // (backtest-history.ts, sparseDeclines) rather than over the history sorted by IP
        ipDeclinesOnly: fc.boolean(),
        // A part with no exact SQL, hoisted (backtest-hoisted.ts): answered per distinct IP, or per distinct
        // count over the history kept (a slice's on each connection)
        hoisted: fc.constantFrom(
          '',
          `ip.matches("[.][23]$") && velocity.card.count_10m >= 2 || `,
          'double(velocity.card.count_1h) / 2.0 >= 1.0 || ',
          // A key's velocity indexed by a variable: the features its values name, counted (rule-reads.ts)
          'velocity.card[ip == "192.0.2.1" ? "count_10m" : "declines_1h"] >= 2 || ',
        ),
      })
      .map(
        ({ count, sum, declines, tenant, days, withTenant, ipDeclinesOnly, hoisted }) =>
          `${hoisted}${ipDeclinesOnly ? `velocity.card.count_1h >= ${count}` : `velocity.ip.count_10m >= ${count}`} && velocity.card.sum_1h > ${sum} || velocity.ip.declines_1h >= ${declines} || velocity.card.first_seen_days >= ${days} && amount > 1000${ipDeclinesOnly ? '' : ` || velocity.ip.first_seen_days >= ${days} && amount < 100`}${withTenant ? ` || velocity.tenant.count_24h > 12 || velocity.tenant.count_10m >= ${tenant} && velocity.tenant.sum_1h > ${sum}` : ''}`,
      );
    // The period may start after some of the history: what came before it still counts in its velocity.
    const history = fc
      .array(step, { minLength: 8, maxLength: 20 })
      .chain((steps) => fc.tuple(fc.constant(steps), fc.integer({ min: 0, max: steps.length - 1 })));
    await fc.assert(
      fc.asyncProperty(history, expression, async ([steps, before], rule) => {
        const m = await aMerchant(h);
        const customerId = await aCustomer(h, m);
        const shadow = await h.admin<{ id: string }>('POST', '/risk/rules', {
          json: {
            name: 'shadowed',
            scope: { kind: 'merchant', id: String(m.id) },
            decisionPoint: 'payments.charge',
            expression: rule,
            action: 'block',
            mode: 'shadow',
          },
        });
        expect(shadow.status).toBe(201);
        let from = await now();
        const inPeriod = new Set<string>();
        for (const [i, s] of steps.entries()) {
          if (i === before && i > 0) {
            await h.advanceClock(1);
            from = await now();
          }
          if (s.wait > 0) await h.advanceClock(s.wait);
          const order = await payments(
            h,
            m,
            'POST',
            '/order',
            anOrder(customerId, { amount: s.amount, cardNumber: s.card, ...(s.ip ? { ip: s.ip } : {}) }),
          );
          if (i >= before) inPeriod.add(String(order.body.data.transactionId));
        }
        await h.advanceClock(1);
        const to = await now();
        const decided = await h.admin<{ data: { objectId: string }[] }>(
          'GET',
          `/risk/decisions?ruleId=${shadow.body.id}&limit=500`,
        );
        const live = new Set(decided.body.data.map((d) => d.objectId).filter((id) => inPeriod.has(id)));
        // Judged in the database (the rule's SQL) in one part and in three slices of the period at once,
        // and in the process (CEL over the streamed history)
        for (const { inProcess, slices } of [
          { inProcess: false, slices: 1 },
          { inProcess: false, slices: 3 },
          { inProcess: true, slices: 1 },
        ]) {
          const result = await h.services.risk.backtest(
            h.services.db,
            {
              tenant: `merchant:${m.id}`,
              decisionPoint: 'payments.charge',
              expression: rule,
              from,
              to,
              sampleSize: 0,
            },
            { keepIds: true, inProcess, slices },
          );
          const how = inProcess ? 'in the process' : `in the database, in ${slices} part(s)`;
          expect(result.parts, how).toBe(slices);
          expect(result.evaluated, how).toBe(steps.length - before);
          expect(new Set(result.matchedIds), how).toEqual(live);
        }
      }),
      {
        // The examples count in fast-check's runs: as many random ones after them as asked for
        numRuns: RUNS + 4,
        // A decline before the period counts in the period's first charge (a backtest once dropped it)
        examples: [
          [
            [
              [
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '0.05', wait: 0 },
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '1.00', wait: 0 },
              ],
              1,
            ],
            'velocity.ip.declines_1h >= 1',
          ],
          // Orders with no IP over two days: no first sighting of an IP
          [
            [
              [
                { ip: undefined, card: CARDS[0] as string, amount: '1.00', wait: 0 },
                { ip: undefined, card: CARDS[0] as string, amount: '1.00', wait: 50_000 },
                { ip: undefined, card: CARDS[0] as string, amount: '1.00', wait: 50_000 },
              ],
              0,
            ],
            'velocity.ip.first_seen_days >= 1',
          ],
          // Three hours cut into three slices: charges on each boundary (three at one instant) are
          // judged once, in the later slice, and counted in its windows from the earlier one
          [
            [
              [
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '1.00', wait: 0 },
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '0.05', wait: 3_600 },
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '1.00', wait: 0 },
                { ip: IPS[1] as string, card: CARDS[0] as string, amount: '1.00', wait: 0 },
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '20.00', wait: 3_599 },
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '1.00', wait: 1 },
                { ip: IPS[1] as string, card: CARDS[0] as string, amount: '1.00', wait: 3_599 },
              ],
              0,
            ],
            'velocity.card.count_1h >= 2 || velocity.ip.declines_1h >= 1',
          ],
          // Sums and declines of charges at one instant: only those written before count
          [
            [
              [
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '0.05', wait: 0 },
                { ip: IPS[0] as string, card: CARDS[0] as string, amount: '20.00', wait: 0 },
                { ip: IPS[1] as string, card: CARDS[0] as string, amount: '20.00', wait: 0 },
                { ip: IPS[1] as string, card: CARDS[0] as string, amount: '20.00', wait: 0 },
              ],
              0,
            ],
            'velocity.card.sum_1h > 3000 || velocity.ip.declines_1h >= 1',
          ],
        ],
      },
    );
  });

  it('counts later disputes as its labels, fraud apart, and answers amounts and a sample', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const from = await now();
    // Charged back as fraud (10.4) three days after capture by the sandbox network.
    const fraud = await payments(
      h,
      m,
      'POST',
      '/order',
      anOrder(customerId, { cardNumber: '4000000000000259', amount: '50.00' }),
    );
    expect(fraud.status).toBe(201);
    await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '12.00' }));
    await h.advanceClock(4 * 86_400);
    const to = (await now()).toISOString();
    // In the database, with velocity (its judged rows kept for the sample; four days are two slices of
    // twice its longest window, judged at once outside the request's unit of work) and without; in the
    // process (velocity indexed by a variable key has no exact SQL, nor can it be hoisted): the same answer
    for (const [expression, judgedIn, parts] of [
      ['card.bin == "400000"', 'database', 1],
      ['card.bin == "400000" && velocity.card.count_24h >= 0', 'database', 2],
      // A regular expression on a scalar, on two: CEL answers it per distinct value, the rest in the database
      ['card.bin == "400000" && !email.matches("^zz")', 'database', 1],
      ['card.bin == "400000" && (card.bin + email).matches("^4")', 'database', 1],
      // … a double of a velocity feature: per distinct count, over each slice's history kept on its connection
      ['card.bin == "400000" && double(velocity.card.count_24h) >= 0.0', 'database', 2],
      ['card.bin == "400000" && card["bin"] == "400000"', 'database', 1],
      // A group indexed by a variable: per distinct value of what the index reads and the members it names
      ['card[card.bin == "400000" ? "bin" : "country"] == "400000"', 'database', 1],
      // … and a key's velocity: the features named counted over each slice; none named (an email): no velocity
      [
        'card.bin == "400000" && velocity.card[card.bin == "400000" ? "count_24h" : "count_1h"] >= 0',
        'database',
        2,
      ],
      ['card.bin == "400000" || velocity.card[email] > 0', 'database', 1],
      ['card.bin == "400000" || velocity[email].count_1h > 0', 'process', 1],
    ] as const) {
      const result = await h.admin<Backtest>('POST', '/risk/rules/backtest', {
        json: {
          scope: { kind: 'merchant', id: String(m.id) },
          decisionPoint: 'payments.charge',
          expression,
          from: from.toISOString(),
          to,
        },
      });
      expect(result.status, JSON.stringify(result.body)).toBe(200);
      expect(result.body, expression).toMatchObject({
        evaluated: 2,
        matched: 1,
        matchedAmounts: { EUR: '50.00' },
        disputed: { matched: 1, all: 1 },
        fraud: { matched: 1, all: 1 },
        judgedIn,
        parts,
        sample: [{ objectId: String(fraud.body.data.transactionId), amount: '50.00' }],
      });
    }
    // A part with more distinct values than the backtest allows (here none; a million by default) sends the
    // rule to the process, whether it would be judged in parts or not: the same answer
    for (const expression of [
      'card.bin == "400000" && !email.matches("^zz")',
      'card.bin == "400000" && !email.matches("^zz") && velocity.card.count_24h >= 0',
      'card.bin == "400000" && double(velocity.card.count_24h) >= 0.0',
    ]) {
      const result = await h.services.risk.backtest(
        h.services.db,
        {
          tenant: `merchant:${m.id}`,
          decisionPoint: 'payments.charge',
          expression,
          from,
          to: new Date(to),
          sampleSize: 5,
        },
        { maxDistinctValues: 0, keepIds: true },
      );
      expect(result, expression).toMatchObject({
        judgedIn: 'process',
        parts: 1,
        evaluated: 2,
        matched: 1,
        matchedIds: [String(fraud.body.data.transactionId)],
      });
    }
  });

  it('refuses what it cannot read: the platform, a period backwards or past 400 days, a bad expression', async () => {
    const m = await aMerchant(h);
    const body = {
      scope: { kind: 'merchant', id: String(m.id) },
      decisionPoint: 'payments.charge',
      expression: 'amount > 100',
      from: '2026-01-01T00:00:00Z',
      to: '2026-02-01T00:00:00Z',
    };
    const refused = async (json: Record<string, unknown>) =>
      (await h.admin<Backtest>('POST', '/risk/rules/backtest', { json: { ...body, ...json } })).body.error;
    expect((await refused({ scope: { kind: 'platform' } }))?.field).toBe('scope.kind');
    expect((await refused({ from: '2026-03-01T00:00:00Z' }))?.field).toBe('from');
    expect((await refused({ from: '2024-01-01T00:00:00Z' }))?.field).toBe('to');
    expect(await refused({ expression: 'amount > "x"' })).toMatchObject({
      field: 'expression',
      details: { position: 0 },
    });
    expect((await refused({ to: 'yesterday' }))?.field).toBe('to');
  });

  it('stops a backtest past its time and refuses it, naming the period', async () => {
    const m = await aMerchant(h);
    const customerId = await aCustomer(h, m);
    const from = await now();
    await payments(h, m, 'POST', '/order', anOrder(customerId, { amount: '12.00' }));
    await h.advanceClock(60);
    // In the process (velocity by a variable key): left past the deadline, before its first rows are judged
    const late = h.services.risk.backtest(
      h.services.db,
      {
        tenant: `merchant:${m.id}`,
        decisionPoint: 'payments.charge',
        expression: 'velocity[email].count_1h > 0',
        from,
        to: await now(),
        sampleSize: 5,
      },
      { timeoutMs: -1 },
    );
    await expect(late).rejects.toMatchObject({
      code: 'limit_exceeded',
      field: 'to',
      details: { timeoutSeconds: expect.any(Number) },
    });
    // The request's connection is usable again
    const ok = await h.admin<Backtest>('POST', '/risk/rules/backtest', {
      json: {
        scope: { kind: 'merchant', id: String(m.id) },
        decisionPoint: 'payments.charge',
        expression: 'velocity[email].count_1h > 0',
        from: from.toISOString(),
        to: (await now()).toISOString(),
      },
    });
    expect(ok.body).toMatchObject({ evaluated: 1, judgedIn: 'process' });
  });
});
