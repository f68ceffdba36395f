// Card transactions under random histories (docs/issuing.md, Clearing and Disputes): authorizations,
// clearings in parts, above the hold and late, partial and whole reversals, refunds, force posts,
// cardholder disputes with provisional credit decided by hand or by the network, and holds that lapse
// as the sandbox clock jumps. A model of the account says what each request must answer and what every
// balance and transaction must read afterwards, to the cent; the ledger's invariants hold after each history.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';

const RUNS = Number(process.env.TESSERA_PROPERTY_RUNS ?? 6);
const DAY = 86_400;
const HOLD_SECONDS = 7 * DAY;
const TOLERANCE_PERCENT = 20n;
let h: Harness;
let partnerKey: string;

beforeAll(async () => {
  h = await Harness.start({ env: { TESSERA_RATE_LIMIT_PER_MINUTE: '1000000' } });
  partnerKey = (await h.admin<{ apiKey: string }>('POST', '/partners', { json: { name: 'Histories' } })).body
    .apiKey;
});
afterAll(() => h.close());

type Step =
  | { kind: 'authorize'; cents: number }
  | { kind: 'clear'; pick: number; percent: number; final: boolean; whole: boolean }
  | { kind: 'reverse'; pick: number; percent: number; whole: boolean }
  | { kind: 'refund'; pick: number; percent: number }
  | { kind: 'force'; cents: number }
  | { kind: 'dispute'; pick: number; percent: number }
  | { kind: 'decide'; pick: number; won: boolean }
  | { kind: 'advance'; seconds: number };

const pick = fc.nat();
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('authorize' as const),
      cents: fc.integer({ min: 1, max: 8_000 }),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('clear' as const),
      pick,
      percent: fc.integer({ min: 1, max: 130 }),
      final: fc.boolean(),
      whole: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('reverse' as const),
      pick,
      percent: fc.integer({ min: 1, max: 110 }),
      whole: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      pick,
      percent: fc.integer({ min: 1, max: 120 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('force' as const), cents: fc.integer({ min: 1, max: 6_000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('dispute' as const),
      pick,
      percent: fc.integer({ min: 1, max: 120 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('decide' as const), pick, won: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      seconds: fc.constantFrom(DAY, 3 * DAY, 8 * DAY),
    }),
  },
);

interface ModelTx {
  id: string;
  status: string;
  authorized: bigint;
  settled: bigint | null;
  held: bigint | null;
  refunded: bigint;
  disputed: bigint;
  expiresAt: number;
}

interface ModelDispute {
  id: string;
  tx: ModelTx;
  amount: bigint;
  status: 'under_review' | 'won' | 'lost';
  decideAt: number;
  unrecovered: bigint;
}

type Wire = {
  transactionId: string;
  status: string;
  settledAmount: string | null;
  heldAmount: string | null;
  refundedAmount: string;
};

const cents = (minor: bigint) => `${minor / 100n}.${(minor % 100n).toString().padStart(2, '0')}`;

describe('card transactions under random histories', () => {
  it('answer what the model says, and leave balances and records to the cent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 25 }), async (steps) => {
        const funds = 20_000n;
        const holder = await aCardholder(h, partnerKey, funds);
        let posted = funds;
        let now = 0;
        const txs: ModelTx[] = [];
        const disputes: ModelDispute[] = [];
        /** A lost dispute: its claim given back, its credit taken back as far as the account holds it. */
        const lose = (d: ModelDispute) => {
          const recovered = d.amount < available() ? d.amount : available() > 0n ? available() : 0n;
          posted -= recovered;
          d.unrecovered = d.amount - recovered;
          d.tx.disputed -= d.amount;
          d.status = 'lost';
        };
        const pending = () =>
          txs.reduce((sum, t) => sum + (t.status === 'authorized' ? (t.held ?? 0n) : 0n), 0n);
        const available = () => posted - pending();
        const sandbox = (path: string, json: Record<string, unknown>) =>
          h.request<Wire>('POST', `/sandbox/issuing${path}`, {
            headers: { authorization: `Bearer ${h.adminToken}` },
            json,
          });

        for (const s of steps) {
          const t = txs.length > 0 && 'pick' in s ? txs[s.pick % txs.length] : undefined;
          switch (s.kind) {
            case 'authorize': {
              const amount = BigInt(s.cents);
              const res = await sandbox('/authorizations', {
                cardId: holder.cardId,
                amount: cents(amount),
                currency: 'EUR',
                merchant: 'Shop',
              });
              const approved = amount <= available();
              expect(res.body.status, 'authorization').toBe(approved ? 'authorized' : 'declined');
              txs.push({
                id: res.body.transactionId,
                status: approved ? 'authorized' : 'declined',
                authorized: amount,
                settled: null,
                held: approved ? amount : null,
                refunded: 0n,
                disputed: 0n,
                expiresAt: now + HOLD_SECONDS,
              });
              break;
            }
            case 'clear': {
              if (!t) break;
              const held = t.held ?? 0n;
              const base = held > 0n ? held : t.authorized;
              const amount = (base * BigInt(s.percent) + 99n) / 100n;
              const res = await sandbox(
                `/transactions/${t.id}/clear`,
                s.whole ? {} : { amount: cents(amount), final: s.final },
              );
              const part = s.whole ? (held > 0n ? held : t.authorized - (t.settled ?? 0n)) : amount;
              const final = s.whole || s.final;
              const ceiling = t.authorized + (t.authorized * TOLERANCE_PERCENT) / 100n;
              let expected: number;
              if (t.status !== 'authorized' && t.status !== 'expired') expected = 409;
              else if (part <= 0n) expected = 400;
              else if ((t.settled ?? 0n) + part > ceiling) expected = 422;
              else if (t.status === 'expired' ? part > available() : part > held && part - held > available())
                expected = 422;
              else expected = 200;
              expect(res.status, `clear ${part} of ${t.status}`).toBe(expected);
              if (expected !== 200) break;
              posted -= part;
              t.settled = (t.settled ?? 0n) + part;
              const rest = t.status === 'authorized' && !final && part < held ? held - part : 0n;
              t.held = rest;
              t.status = rest > 0n ? 'authorized' : 'settled';
              break;
            }
            case 'reverse': {
              if (!t) break;
              const held = t.held ?? 0n;
              const amount = (held * BigInt(s.percent) + 99n) / 100n;
              const res = await sandbox(
                `/transactions/${t.id}/reverse`,
                s.whole ? {} : { amount: cents(amount) },
              );
              const expected =
                t.status !== 'authorized' ? 409 : !s.whole && (amount <= 0n || amount > held) ? 400 : 200;
              expect(res.status, `reverse of ${t.status}`).toBe(expected);
              if (expected !== 200) break;
              const rest = s.whole ? 0n : held - amount;
              t.held = rest;
              if (rest === 0n) t.status = t.settled === null ? 'reversed' : 'settled';
              break;
            }
            case 'refund': {
              if (!t) break;
              const left = (t.settled ?? 0n) - t.refunded - t.disputed;
              const amount = (left * BigInt(s.percent) + 99n) / 100n;
              const res = await sandbox('/refunds', {
                transactionId: t.id,
                amount: cents(amount > 0n ? amount : 1n),
              });
              const expected = left <= 0n ? 409 : amount > left ? 400 : 201;
              expect(res.status, `refund ${amount} of ${left}`).toBe(expected);
              if (expected !== 201) break;
              posted += amount;
              t.refunded += amount;
              break;
            }
            case 'force': {
              const amount = BigInt(s.cents);
              const res = await sandbox('/force-posts', {
                cardId: holder.cardId,
                amount: cents(amount),
                currency: 'EUR',
                merchant: 'Airline',
              });
              expect(res.status, 'force post').toBe(amount <= available() ? 201 : 422);
              if (res.status === 201) posted -= amount;
              break;
            }
            case 'dispute': {
              if (!t) break;
              const left = (t.settled ?? 0n) - t.refunded - t.disputed;
              const amount = left > 0n ? (left * BigInt(s.percent) + 99n) / 100n : 1n;
              const res = await h.request<{ disputeId: string }>(
                'POST',
                `/issuing/v1/transactions/${t.id}/disputes`,
                {
                  headers: { 'x-partner-api-key': partnerKey },
                  json: { reason: 'not_received', amount: cents(amount) },
                },
              );
              const expected = left <= 0n ? 409 : amount > left ? 400 : 201;
              expect(res.status, `dispute ${amount} of ${left}`).toBe(expected);
              if (expected !== 201) break;
              t.disputed += amount;
              posted += amount; // the provisional credit
              disputes.push({
                id: res.body.disputeId,
                tx: t,
                amount,
                status: 'under_review',
                decideAt: now + 10 * DAY,
                unrecovered: 0n,
              });
              break;
            }
            case 'decide': {
              const d = disputes.length > 0 ? disputes[s.pick % disputes.length] : undefined;
              if (!d) break;
              const res = await sandbox(`/disputes/${d.id}/decide`, { outcome: s.won ? 'won' : 'lost' });
              expect(res.status, `decide a dispute ${d.status}`).toBe(
                d.status === 'under_review' ? 200 : 409,
              );
              if (d.status !== 'under_review') break;
              if (s.won) d.status = 'won';
              else lose(d);
              break;
            }
            case 'advance': {
              await h.advanceClock(s.seconds);
              now += s.seconds;
              // The sweeps run in their order: holds lapse, then the network decides what is due.
              for (const x of txs) {
                if (x.status === 'authorized' && x.expiresAt <= now) {
                  x.status = 'expired';
                  x.held = 0n;
                }
              }
              for (const d of [...disputes].sort((a, b) => a.decideAt - b.decideAt)) {
                if (d.status !== 'under_review' || d.decideAt > now) continue;
                if (d.amount % 100n === 13n) lose(d);
                else d.status = 'won';
              }
              break;
            }
          }
        }

        expect(await holder.balance()).toMatchObject({
          balance: cents(posted),
          availableBalance: cents(available()),
          pendingAmount: cents(pending()),
        });
        const auth = await holder.relogin();
        for (const t of txs) {
          const res = await h.request<Wire>('GET', `/issuing/v1/transactions/${t.id}`, { headers: auth });
          expect(res.body, t.id).toMatchObject({
            status: t.status,
            settledAmount: t.settled === null ? null : cents(t.settled),
            heldAmount: t.held === null ? null : cents(t.held),
            refundedAmount: cents(t.refunded),
          });
        }
        for (const d of disputes) {
          const res = await h.request<{ status: string; unrecoveredAmount: string }>(
            'GET',
            `/issuing/v1/disputes/${d.id}`,
            {
              headers: { 'x-partner-api-key': partnerKey },
            },
          );
          expect(res.body, d.id).toMatchObject({ status: d.status, unrecoveredAmount: cents(d.unrecovered) });
        }
        await expectLedgerInvariants(h);
      }),
      { numRuns: RUNS },
    );
  }, 900_000);
});
