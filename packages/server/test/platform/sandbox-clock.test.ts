// POST /sandbox/clock/advance: moves the injected clock, persists it, and runs every due sweep first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

const sandbox = <T>(method: string, path: string, json?: unknown) =>
  h.request<T>(method, `/sandbox${path}`, {
    headers: { authorization: `Bearer ${h.adminToken}` },
    ...(json ? { json } : {}),
  });

describe('sandbox clock', () => {
  it('advances by whole seconds, reports every sweep it ran, and persists the offset', async () => {
    const before = await sandbox<{ now: string; offsetSeconds: number }>('GET', '/clock');
    const advanced = await sandbox<{ now: string; offsetSeconds: number; processed: Record<string, number> }>(
      'POST',
      '/clock/advance',
      {
        seconds: 86_400,
      },
    );
    expect(advanced.status).toBe(200);
    expect(advanced.body.offsetSeconds).toBe(before.body.offsetSeconds + 86_400);
    const movedMs = Date.parse(advanced.body.now) - Date.parse(before.body.now);
    expect(movedMs).toBeGreaterThanOrEqual(86_400_000);
    expect(movedMs).toBeLessThan(86_400_000 + 5_000);
    expect(Object.keys(advanced.body.processed)).toEqual([
      'sandbox-clock',
      'rate-limit-windows',
      'webhook-deliveries',
      'webhook-waiting-deliveries',
      'idempotency-keys',
      'webhook-attempt-retention',
      'sandbox-message-retention',
      'onboarding-invitation-retention',
      'risk-history-retention',
      'risk-review-expiry',
      'ledger-rollup',
      'console-daily-figures',
      'approval-expiry',
      'balance-days',
      'sanctions-inbox',
      'sanctions-rescreen',
      'aml-unusual-volume',
      // The rails' own work first (rails/rails.ts), then the APIs'.
      'chain-confirmations',
      'card-network-challenges',
      'card-network-scripts',
      'card-network-reconciliation',
      'card-network-chargebacks',
      'issuing-3ds-challenges',
      'issuing-authorization-holds',
      'issuing-dispute-decisions',
      'issuing-topups',
      'aml-rapid-movement',
      'aml-cardholder-volume',
      'issuing-crypto-topups',
      'crypto-orders',
      'crypto-refunds',
      'payments-recurring-billing',
      'payments-authorizations',
      'payments-disputes',
      'aml-refunds-over-captures',
      'payout-runs',
      'bank-news',
    ]);
    const row = await h.services.db
      .selectFrom('sandbox_state')
      .select('clock_offset_ms')
      .executeTakeFirstOrThrow();
    expect(Number(row.clock_offset_ms)).toBe(advanced.body.offsetSeconds * 1000);
    expect(Math.abs(h.services.clock.now().getTime() - Date.parse(advanced.body.now))).toBeLessThan(5_000);
  });

  it('refuses anything but a positive whole number of seconds up to ten years', async () => {
    for (const seconds of [0, -5, 1.5, '60', null, 10 * 366 * 86_400 + 1]) {
      const res = await sandbox<{ error: { code: string; field: string } }>('POST', '/clock/advance', {
        seconds,
      });
      expect(res.status, String(seconds)).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'validation_failed', field: 'seconds' });
    }
    expect((await sandbox('POST', '/clock/advance', {})).status).toBe(400);
  });
});
