// Idempotency keys (docs/architecture.md), on the admin API's mutating routes (every API scope shares the same hooks).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyDigest } from '../../src/platform/idempotency/idempotency-store.ts';
import { Harness } from '../harness/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

const countPartners = async (name: string) =>
  (await h.services.db.selectFrom('partners').select('id').where('name', '=', name).execute()).length;
const withKey = (key: string) => ({ 'idempotency-key': key });

describe('Idempotency-Key', () => {
  it('replays the stored answer for the same key and body, without running it again', async () => {
    const first = await h.admin<{ id: string }>('POST', '/partners', {
      headers: withKey('k-replay'),
      json: { name: 'Once' },
    });
    const second = await h.admin<{ id: string }>('POST', '/partners', {
      headers: withKey('k-replay'),
      json: { name: 'Once' },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.text).toBe(first.text);
    expect(await countPartners('Once')).toBe(1);
  });

  it('answers 422 naming the key when it is reused for a different request', async () => {
    await h.admin('POST', '/partners', { headers: withKey('k-mismatch'), json: { name: 'First' } });
    const reused = await h.admin<{ error: { code: string; field: string } }>('POST', '/partners', {
      headers: withKey('k-mismatch'),
      json: { name: 'Second' },
    });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toMatchObject({ code: 'idempotency_mismatch', field: 'Idempotency-Key' });
    expect(await countPartners('Second')).toBe(0);
    const otherRoute = await h.admin('POST', '/stores', {
      headers: withKey('k-mismatch'),
      json: { name: 'First' },
    });
    expect(otherRoute.status).toBe(422);
  });

  it('lets exactly one of many concurrent duplicates run', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        h.admin('POST', '/partners', { headers: withKey('k-race'), json: { name: 'Raced' } }),
      ),
    );
    const fresh = results.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const r of results) {
      expect(
        r.status === 201 ||
          (r.status === 409 &&
            (r.body as { error: { code: string } }).error.code === 'idempotency_in_progress'),
      ).toBe(true);
    }
    expect(await countPartners('Raced')).toBe(1);
  });

  it('stores an answer deflated with the dictionary and sealed, and replays it byte for byte', async () => {
    const short = { name: 'Short answer' };
    const long = {
      name: 'Long answer',
      sites: Array.from({ length: 8 }, (_, i) => ({ name: `Site ${i + 1}` })),
    };
    const stored = (key: string) =>
      h.services.db
        .selectFrom('idempotency_keys')
        .select(['response_body', 'response_content_type'])
        .where('key_digest', '=', keyDigest({ scope: 'admin', key }).digest)
        .executeTakeFirstOrThrow();
    for (const [key, path, json] of [
      ['k-short', '/partners', short],
      ['k-long', '/merchants', long],
    ] as const) {
      const first = await h.admin('POST', path, { headers: withKey(key), json });
      const again = await h.admin('POST', path, { headers: withKey(key), json });
      expect(first.status).toBe(201);
      expect(again.headers.get('idempotency-replayed')).toBe('true');
      expect(again.text).toBe(first.text);
      const row = await stored(key);
      const sealed = row.response_body ?? Buffer.alloc(0);
      // Never the answer itself: its secrets (API keys) are not readable in the table.
      expect(sealed.toString('latin1')).not.toContain((first.body as { apiKey: string }).apiKey);
      // Its first byte: deflated with the dictionary, then sealed (4); as bytes, 12 of nonce and 16 of
      // tag beside what deflate left of the answer, shorter than the answer itself
      expect(sealed[0]).toBe(4);
      expect(sealed.length).toBeLessThan(1 + 12 + Buffer.byteLength(first.text) + 16);
      // The usual JSON content type stored as null, replayed as it was sent
      expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(row.response_content_type).toBeNull();
    }
  });

  it('stores and replays client errors too', async () => {
    const first = await h.admin('POST', '/merchants/987654/api-keys', { headers: withKey('k-404') });
    const second = await h.admin('POST', '/merchants/987654/api-keys', { headers: withKey('k-404') });
    expect([first.status, second.status]).toEqual([404, 404]);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
  });

  it('never answers for another key whose row holds the same digest: a row is its whole SHA-256', async () => {
    const db = h.services.db;
    const json = { name: 'Shared digest' };
    await h.admin('POST', '/partners', { headers: withKey('k-digest-first'), json });
    const first = keyDigest({ scope: 'admin', key: 'k-digest-first' });
    const next = keyDigest({ scope: 'admin', key: 'k-digest-next' });
    const another = keyDigest({ scope: 'another-caller', key: 'k-digest-next' });
    // Another caller's row for the same request, forged to hold the digest of this caller's next key
    // beside the rest of its own SHA-256
    await sql`INSERT INTO idempotency_keys (key_digest, key_check, request_sha256, response_status,
        response_content_type, response_body, created_at, due_at)
      SELECT ${next.digest}::uuid, ${another.check}, request_sha256, response_status, response_content_type,
        response_body, created_at, due_at
      FROM idempotency_keys WHERE key_digest = ${first.digest}::uuid`.execute(db);
    const sent = await h.admin('POST', '/partners', { headers: withKey('k-digest-next'), json });
    // Not that row's answer, and nothing done twice: the key is refused as one in use
    expect(sent.headers.get('idempotency-replayed')).toBeNull();
    expect(sent.status).toBe(409);
    expect(await countPartners('Shared digest')).toBe(1);
  });

  it('finds a key stored before migrations 0084 and 0087 by the digest and check they gave it', async () => {
    const pairs = [
      ['issuing:partner:ptn_01', 'order-1'],
      ['anonymous:127.0.0.1', 'k~!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}'],
      ['payments:merchant:1001', 'x'.repeat(255)],
    ];
    // The migrations' own expressions (0084_idempotency_keys_by_digest.sql, 0087_idempotency_keys_one_due_index.sql)
    const { rows } = await sql<{ digest: string; check: Buffer }>`
      SELECT encode(substr(sha256(convert_to(scope || E'\n' || key, 'UTF8')), 1, 16), 'hex')::uuid::text AS digest,
        substr(sha256(convert_to(scope || E'\n' || key, 'UTF8')), 17, 16) AS check
      FROM unnest(${pairs.map(([scope]) => scope)}::text[], ${pairs.map(([, key]) => key)}::text[])
        WITH ORDINALITY AS p(scope, key, i) ORDER BY i`.execute(h.services.db);
    expect(rows).toEqual(pairs.map(([scope = '', key = '']) => keyDigest({ scope, key })));
  });

  it('refuses malformed keys naming the header', async () => {
    for (const key of ['x'.repeat(256), 'has space']) {
      const res = await h.admin<{ error: { field: string } }>('POST', '/partners', {
        headers: withKey(key),
        json: { name: 'K' },
      });
      expect(res.status).toBe(400);
      expect(res.body.error.field).toBe('Idempotency-Key');
    }
    expect(await countPartners('K')).toBe(0);
  });

  it('refuses a key whose answer expired (24 h) instead of running again, and forgets it after 30 days', async () => {
    await h.admin('POST', '/partners', { headers: withKey('k-ttl'), json: { name: 'Day one' } });
    const advanced = await h.advanceClock(24 * 3600 + 1);
    expect(advanced.processed['idempotency-keys']).toBeGreaterThanOrEqual(1);
    const late = await h.admin<{ error: { code: string } }>('POST', '/partners', {
      headers: withKey('k-ttl'),
      json: { name: 'Day one' },
    });
    expect(late.status).toBe(422);
    expect(late.body.error.code).toBe('idempotency_key_expired');
    expect(await countPartners('Day one')).toBe(1);
    const other = await h.admin('POST', '/partners', {
      headers: withKey('k-ttl'),
      json: { name: 'Day two' },
    });
    expect(other.status).toBe(422);

    await h.advanceClock(29 * 24 * 3600);
    const reused = await h.admin('POST', '/partners', {
      headers: withKey('k-ttl'),
      json: { name: 'Day thirty' },
    });
    expect(reused.status).toBe(201);
    expect(reused.headers.get('idempotency-replayed')).toBeNull();
  });

  it('rolls a request answered 5xx back whole and stores nothing, so its retry runs afresh', async () => {
    // The key's row cannot be written (its table is renamed away for a moment), so the request cannot
    // commit: its effect must go with it.
    await h.services.db.schema.alterTable('idempotency_keys').renameTo('idempotency_keys_away').execute();
    try {
      const failed = await h.admin('POST', '/partners', {
        headers: withKey('k-5xx'),
        json: { name: 'Rolled back' },
      });
      expect(failed.status).toBe(500);
    } finally {
      await h.services.db.schema.alterTable('idempotency_keys_away').renameTo('idempotency_keys').execute();
    }
    expect(await countPartners('Rolled back')).toBe(0);
    const retried = await h.admin('POST', '/partners', {
      headers: withKey('k-5xx'),
      json: { name: 'Rolled back' },
    });
    expect(retried.status).toBe(201);
    expect(await countPartners('Rolled back')).toBe(1);
  });

  it('ignores the header on reads', async () => {
    const res = await h.admin('GET', '/partners', { headers: withKey('k-get') });
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotency-replayed')).toBeNull();
  });
});
