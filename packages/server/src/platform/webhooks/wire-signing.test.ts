// The server's signing and encryption against the published vectors, and against @tessera/sdk's
// verifiers: what one side writes, the other reads.
import { decryptIpn, verifyCryptoWebhook, verifyIssuingWebhook } from '@tessera/sdk';
import { describe, expect, it } from 'vitest';
import {
  cryptoWebhookSignature,
  encryptIpn,
  ipnFormBody,
  signCryptoWebhook,
  signIssuingWebhook,
} from './wire-signing.ts';

describe('crypto webhook signature (docs/wire-compatibility.md test vectors)', () => {
  it('matches the first published vector', () => {
    expect(
      cryptoWebhookSignature(
        {
          event_type: 'ORDER.PAYMENT.RECEIVED',
          resource: { reference: '1400012634', amount: '10.90', currency: 'EUR' },
          state: 'completed',
        },
        'u_test_webhooks_a1df76bf-fccc-4e3a-a575-268db810ac2b',
      ),
    ).toBe('da5d46662744c63f3f22fc1f35243189d46c4721a7d4f7d4ee8216cf809bf16a');
  });

  it('matches the second published vector', () => {
    expect(
      cryptoWebhookSignature(
        {
          event_type: 'ORDER.PAYMENT.CANCELLED',
          resource: { amount: '0.99', currency: 'EUR', reference: 'REF-12345678' },
          state: 'cancelled',
        },
        'u_test_webhooks_123456789',
      ),
    ).toBe('bb32374545004b5f4a1264a8e8e78e3357e27a35a8a3b334fe1a2a47b60a35ba');
  });

  it('signs a body that verifies, and refuses a changed one', () => {
    const body = signCryptoWebhook(
      { state: 'completed', event_type: 'X', resource: { amount: '1.00' } },
      'sec',
    );
    expect(body.indexOf('"event_type"')).toBeLessThan(body.indexOf('"resource"'));
    expect(verifyCryptoWebhook(body, 'sec')).toMatchObject({ state: 'completed' });
    expect(() => verifyCryptoWebhook(body.replace('1.00', '9.00'), 'sec')).toThrow(
      /invalid webhook signature/,
    );
    expect(() => verifyCryptoWebhook(body, 'other')).toThrow(/invalid webhook signature/);
  });
});

describe('issuing webhook JWS', () => {
  it('signs the exact body with HS512 and no timestamp claim', async () => {
    const body = '{"eventType":"cardStatusChanged","eventId":"evt_1","customerId":"cust_1","data":{}}';
    const jws = await signIssuingWebhook(body, 'whsk_key');
    const [header = '', payload = ''] = jws.split('.');
    expect(JSON.parse(Buffer.from(header, 'base64url').toString())).toEqual({ alg: 'HS512', typ: 'JWT' });
    expect(Buffer.from(payload, 'base64url').toString()).toBe(body);
    expect(await verifyIssuingWebhook(body, jws, 'whsk_key')).toMatchObject({ eventId: 'evt_1' });
  });

  it('refuses a wrong key, a changed body, a missing header and another algorithm', async () => {
    const body = '{"a":1}';
    const jws = await signIssuingWebhook(body, 'k1');
    await expect(verifyIssuingWebhook(body, jws, 'k2')).rejects.toThrow();
    await expect(verifyIssuingWebhook('{"a":2}', jws, 'k1')).rejects.toThrow(/differs/);
    await expect(verifyIssuingWebhook(body, undefined, 'k1')).rejects.toThrow(/missing/);
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(body).toString('base64url')}.`;
    await expect(verifyIssuingWebhook(body, none, 'k1')).rejects.toThrow();
  });
});

describe('payments IPN', () => {
  const secret = 'A'.repeat(16) + 'b'.repeat(16);

  it('encrypts with a fresh IV each time and decrypts back', () => {
    const a = encryptIpn('{"orderId":1}', secret);
    const b = encryptIpn('{"orderId":1}', secret);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[A-Za-z0-9+/=]+,[A-Za-z0-9+/=]+$/);
    expect(Buffer.from(a.split(',')[0] ?? '', 'base64')).toHaveLength(16);
    expect(decryptIpn(a, secret)).toEqual({ orderId: 1 });
    expect(() => decryptIpn(a, 'C'.repeat(32))).toThrow();
  });

  it('posts both field names', () => {
    const form = new URLSearchParams(ipnFormBody('iv,ct'));
    expect(form.get('opensslResult')).toBe('iv,ct');
    expect(form.get('result')).toBe('iv,ct');
  });

  it('refuses a secret that is not 32 bytes', () => {
    expect(() => encryptIpn('{}', 'short')).toThrow(/32 bytes/);
  });
});
