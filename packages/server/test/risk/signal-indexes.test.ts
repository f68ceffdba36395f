// The risk signals' indexes are on hashes (migration 0079, signal-index.ts), and Postgres uses an
// expression index only for a read that names the very expression it was built on. If a read's hash and the
// migration's drifted apart, every velocity read and backtest would scan the table and still answer right:
// so each read is planned here with sequential scans priced out, and must name its index.
import { CompiledQuery, type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VelocityFeature } from '../../src/platform/risk/decision-points.ts';
import { type SignalKeyColumn, signalsMatching } from '../../src/platform/risk/signal-index.ts';
import { velocityColumns } from '../../src/platform/risk/velocity.ts';
import { Harness } from '../harness/harness.ts';
import { searchedByHash } from '../harness/query-plans.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

/** The indexes a read searches by their hash, with sequential scans priced out */
const searched = (query: CompiledQuery) => searchedByHash(h.services.db, query);

/** A count of the signals a condition names over `risk_signals`, aliased `alias` when given */
const compiled = (condition: RawBuilder<unknown>, alias = '') =>
  sql`SELECT count(*) FROM risk_signals ${sql.raw(alias)} WHERE ${condition} AND at > now() - interval '1 day'`.compile(
    h.services.db,
  );

const KEYS: [SignalKeyColumn, string][] = [
  ['ip', 'risk_signals_ip_hash'],
  ['email', 'risk_signals_email_hash'],
  ['card_fingerprint', 'risk_signals_card_hash'],
  ['customer_id', 'risk_signals_customer_hash'],
];

describe('the risk signals’ hashed indexes', () => {
  const tenant = 'merchant:1';
  const point = 'payments.charge';

  it('serve a backtest’s and a tenant window’s reads of a tenant at a point', async () => {
    expect(await searched(compiled(signalsMatching('', { tenant, point })))).toEqual([
      'risk_signals_point_hash',
    ]);
    expect(await searched(compiled(signalsMatching('r', { tenant, point }), 'r'))).toEqual([
      'risk_signals_point_hash',
    ]);
  });

  it.each(KEYS)('serve a backtest’s probe of a key by %s', async (column, index) => {
    const probe = signalsMatching('p', { tenant, point }, { column, value: sql`${'a value'}` });
    expect(await searched(compiled(probe, 'p'))).toEqual([index]);
  });

  it('serve every velocity key’s live read', async () => {
    const features: VelocityFeature[] = (['ip', 'email', 'card', 'customer'] as const).flatMap((key) => [
      { key, metric: 'count', window: '24h' },
      { key, metric: 'first_seen', window: 'days' },
    ]);
    const columns = velocityColumns(
      {
        point,
        tenant,
        at: new Date(),
        currency: 'EUR',
        keys: { ip: '192.0.2.1', email: 'a@example.com', cardFingerprint: 'fp', customerId: 'cust_1' },
      },
      features,
    );
    const indexes = await searched(CompiledQuery.raw(`SELECT ${columns.sql}`, columns.parameters));
    // Each key's windows and its first sighting: two searches of its index
    expect(indexes.sort()).toEqual(
      ['card', 'card', 'customer', 'customer', 'email', 'email', 'ip', 'ip'].map(
        (k) => `risk_signals_${k}_hash`,
      ),
    );
  });
});
