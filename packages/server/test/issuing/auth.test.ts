// Card issuing authentication: partner, email, wallet, refresh and two-factor flows, over HTTP.
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bech32Encode,
  evmAddressOf,
  evmMessageDigest,
  multiversxMessageDigest,
} from '../../src/rails/wallet-verifier/signature-verifier.ts';
import { Harness } from '../harness/harness.ts';
import { latestCode } from '../harness/sandbox-inbox.ts';

let h: Harness;
let partner: { id: string; partnerId: string; apiKey: string };
let other: { id: string; partnerId: string; apiKey: string };

beforeAll(async () => {
  h = await Harness.start();
  partner = (await h.admin<typeof partner>('POST', '/partners', { json: { name: 'Acme Cards' } })).body;
  other = (await h.admin<typeof other>('POST', '/partners', { json: { name: 'Other Bank' } })).body;
});
afterAll(async () => {
  await h.close();
});

type Tokens = { customerId: string; accessToken: string; refreshToken: string; expiresIn: number };
type IssuingError = {
  code: number;
  message: string;
  error: string;
  field?: string;
  details?: Record<string, unknown>;
};
const STRONG = 'Str0ng!pass';

const issuing = <T = unknown>(
  method: string,
  path: string,
  options: Parameters<Harness['request']>[2] = {},
) => h.request<T>(method, `/issuing/v1${path}`, options);
const asPartner = (key = partner.apiKey) => ({ 'x-partner-api-key': key });
const publicOf = (p = partner) => ({ 'x-partner-id': p.partnerId });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function registerByEmail(email: string, p = partner): Promise<Tokens> {
  expect(
    (
      await issuing('POST', '/auth/register/email', {
        headers: publicOf(p),
        json: { email, password: STRONG },
      })
    ).status,
  ).toBe(202);
  const verified = await issuing<Tokens>('POST', '/auth/register/email/verify', {
    headers: publicOf(p),
    json: { email, code: await latestCode(h, email) },
  });
  expect(verified.status).toBe(200);
  return verified.body;
}

describe('partner flow', () => {
  it('registers a customer by email and the partner’s user id, and logs it in', async () => {
    const created = await issuing<{ customerId: string }>('POST', '/auth/register/partner', {
      headers: asPartner(),
      json: { email: 'Ada@Example.com', userId: 'user-42' },
    });
    expect(created.status).toBe(201);
    expect(created.body.customerId).toMatch(/^cust_[0-9A-HJKMNP-TV-Z]{26}$/);
    const byId = await issuing<Tokens>('POST', '/auth/login/partner', {
      headers: asPartner(),
      json: { customerId: created.body.customerId },
    });
    expect(byId.status).toBe(200);
    expect(byId.body).toMatchObject({
      customerId: created.body.customerId,
      tokenType: 'Bearer',
      expiresIn: 900,
    });
    const byUserId = await issuing<Tokens>('POST', '/auth/login/partner', {
      headers: asPartner(),
      json: { userId: 'user-42' },
    });
    expect(byUserId.body.customerId).toBe(created.body.customerId);
    expect(
      (
        await issuing('PUT', '/auth/2fa', {
          headers: bearer(byId.body.accessToken),
          json: { enabled: false },
        })
      ).status,
    ).toBe(200);
  });

  it('answers 409 with the existing id for a duplicate, and names bad fields', async () => {
    const first = await issuing<{ customerId: string }>('POST', '/auth/register/partner', {
      headers: asPartner(),
      json: { email: 'dup@example.com' },
    });
    const again = await issuing<IssuingError>('POST', '/auth/register/partner', {
      headers: asPartner(),
      json: { email: 'DUP@example.com' },
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: 409,
      message: 'Conflict',
      error: 'conflict',
      details: { customerId: first.body.customerId },
    });
    const cases: [unknown, string][] = [
      [{}, 'email'],
      [{ email: 'not-an-email' }, 'email'],
      [{ userId: 'has spaces' }, 'userId'],
      [{ email: 'w@example.com', walletAddress: '0x1234' }, 'walletAddress'],
    ];
    for (const [json, field] of cases) {
      const res = await issuing<IssuingError>('POST', '/auth/register/partner', {
        headers: asPartner(),
        json,
      });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.body.field).toBe(field);
    }
  });

  it('refuses missing or wrong keys, and keeps partners apart', async () => {
    for (const headers of [{}, asPartner('ptk_wrong'), publicOf()]) {
      const res = await issuing<IssuingError>('POST', '/auth/register/partner', {
        headers,
        json: { email: 'x@example.com' },
      });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(401);
    }
    const mine = await issuing<{ customerId: string }>('POST', '/auth/register/partner', {
      headers: asPartner(),
      json: { userId: 'iso-1' },
    });
    const foreign = await issuing('POST', '/auth/login/partner', {
      headers: asPartner(other.apiKey),
      json: { customerId: mine.body.customerId },
    });
    expect(foreign.status).toBe(404);
    expect(
      (
        await issuing('POST', '/auth/login/partner', {
          headers: asPartner(other.apiKey),
          json: { userId: 'iso-1' },
        })
      ).status,
    ).toBe(404);
    expect((await issuing('POST', '/auth/login/partner', { headers: asPartner(), json: {} })).status).toBe(
      400,
    );
  });

  it('replays a registration sent twice with one Idempotency-Key', async () => {
    const send = () =>
      issuing<{ customerId: string }>('POST', '/auth/register/partner', {
        headers: { ...asPartner(), 'idempotency-key': 'reg-once' },
        json: { email: 'once@example.com' },
      });
    const [a, b] = [await send(), await send()];
    expect(b.headers.get('idempotency-replayed')).toBe('true');
    expect(b.body.customerId).toBe(a.body.customerId);
  });
});

describe('email flow', () => {
  it('enforces the password policy, naming the rule', async () => {
    const rules: [string, RegExp][] = [
      ['Sh0rt!', /at least 8/],
      ['alllower1!', /uppercase/],
      ['ALLUPPER1!', /lowercase/],
      ['NoDigits!!', /number/],
      ['NoSymbol11', /symbol/],
    ];
    for (const [password, rule] of rules) {
      const res = await issuing<IssuingError & { detail: string }>('POST', '/auth/register/email', {
        headers: publicOf(),
        json: { email: 'policy@example.com', password },
      });
      expect(res.status, password).toBe(400);
      expect(res.body.field).toBe('password');
      expect(res.body.detail).toMatch(rule);
    }
  });

  it('registers, verifies the emailed code and logs in', async () => {
    const tokens = await registerByEmail('grace@example.com');
    expect(tokens.customerId).toMatch(/^cust_/);
    const login = await issuing<Tokens>('POST', '/auth/login/email', {
      headers: publicOf(),
      json: { email: 'GRACE@example.com', password: STRONG },
    });
    expect(login.status).toBe(200);
    expect(login.body.customerId).toBe(tokens.customerId);
  });

  it('never tells whether an email exists', async () => {
    await registerByEmail('taken@example.com');
    const again = await issuing('POST', '/auth/register/email', {
      headers: publicOf(),
      json: { email: 'taken@example.com', password: STRONG },
    });
    const fresh = await issuing('POST', '/auth/register/email', {
      headers: publicOf(),
      json: { email: 'free@example.com', password: STRONG },
    });
    expect([again.status, again.text]).toEqual([fresh.status, fresh.text]);
    const notice = await h.request<{ data: { subject: string; body: string }[] }>(
      'GET',
      '/sandbox/messages?recipient=taken@example.com&limit=1',
      {
        headers: bearer(h.adminToken),
      },
    );
    expect(notice.body.data[0]?.subject).toMatch(/Someone tried to register/);
    expect(notice.body.data[0]?.body).not.toMatch(/\d{6}/);
    const unknown = await issuing<IssuingError>('POST', '/auth/login/email', {
      headers: publicOf(),
      json: { email: 'nobody@example.com', password: STRONG },
    });
    const wrong = await issuing<IssuingError>('POST', '/auth/login/email', {
      headers: publicOf(),
      json: { email: 'taken@example.com', password: 'Wr0ng!pass' },
    });
    const unverified = await issuing<IssuingError>('POST', '/auth/login/email', {
      headers: publicOf(),
      json: { email: 'free@example.com', password: STRONG },
    });
    for (const res of [unknown, wrong, unverified]) {
      expect(res.status).toBe(401);
      expect({ ...res.body, requestId: undefined }).toEqual({ ...unknown.body, requestId: undefined });
    }
  });

  it('burns a code after 5 wrong attempts and lets codes expire', async () => {
    await issuing('POST', '/auth/register/email', {
      headers: publicOf(),
      json: { email: 'guess@example.com', password: STRONG },
    });
    const code = await latestCode(h, 'guess@example.com');
    const wrongCode = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      expect(
        (
          await issuing('POST', '/auth/register/email/verify', {
            headers: publicOf(),
            json: { email: 'guess@example.com', code: wrongCode },
          })
        ).status,
      ).toBe(401);
    }
    const late = await issuing('POST', '/auth/register/email/verify', {
      headers: publicOf(),
      json: { email: 'guess@example.com', code },
    });
    expect(late.status).toBe(401);

    await issuing('POST', '/auth/register/email', {
      headers: publicOf(),
      json: { email: 'slow@example.com', password: STRONG },
    });
    const slowCode = await latestCode(h, 'slow@example.com');
    await h.advanceClock(15 * 60 + 1);
    expect(
      (
        await issuing('POST', '/auth/register/email/verify', {
          headers: publicOf(),
          json: { email: 'slow@example.com', code: slowCode },
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await issuing<IssuingError>('POST', '/auth/register/email/verify', {
          headers: publicOf(),
          json: { email: 'slow@example.com', code: '12ab56' },
        })
      ).body.field,
    ).toBe('code');
  });

  it('locks the account for 15 minutes after 5 failed logins', async () => {
    await registerByEmail('locked@example.com');
    for (let i = 0; i < 5; i++) {
      await issuing('POST', '/auth/login/email', {
        headers: publicOf(),
        json: { email: 'locked@example.com', password: 'Wr0ng!pass' },
      });
    }
    const right = { headers: publicOf(), json: { email: 'locked@example.com', password: STRONG } };
    expect((await issuing('POST', '/auth/login/email', right)).status).toBe(401);
    await h.advanceClock(15 * 60 + 1);
    expect((await issuing('POST', '/auth/login/email', right)).status).toBe(200);
  });

  it('keeps each partner’s customers apart, and refuses unknown partner ids', async () => {
    await registerByEmail('both@example.com', partner);
    const atOther = await issuing('POST', '/auth/login/email', {
      headers: publicOf(other),
      json: { email: 'both@example.com', password: STRONG },
    });
    expect(atOther.status).toBe(401);
    expect((await registerByEmail('both@example.com', other)).customerId).toMatch(/^cust_/);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      expect(
        (
          await issuing('POST', '/auth/login/email', {
            headers: { 'x-partner-id': id },
            json: { email: 'both@example.com', password: STRONG },
          })
        ).status,
      ).toBe(401);
    }
  });
});

describe('two-factor login', () => {
  async function loginWithTwoFactor(email: string) {
    const tokens = await registerByEmail(email);
    expect(
      (await issuing('PUT', '/auth/2fa', { headers: bearer(tokens.accessToken), json: { enabled: true } }))
        .status,
    ).toBe(200);
    const login = await issuing<{ twoFactorRequired: boolean; sessionToken: string }>(
      'POST',
      '/auth/login/email',
      {
        headers: publicOf(),
        json: { email, password: STRONG },
      },
    );
    expect(login.body.twoFactorRequired).toBe(true);
    return login.body.sessionToken;
  }

  it('sends a code through the notifier and exchanges it once for tokens', async () => {
    const session = await loginWithTwoFactor('two@example.com');
    const sent = await issuing<{ channel: string; expiresAt: string }>('POST', '/auth/2fa/send', {
      headers: bearer(session),
    });
    expect(sent.status).toBe(202);
    expect(sent.body.channel).toBe('email');
    const code = await latestCode(h, 'two@example.com');
    expect(
      (
        await issuing('POST', '/auth/2fa/verify', {
          headers: bearer(session),
          json: { code: code === '999999' ? '000000' : '999999' },
        })
      ).status,
    ).toBe(401);
    const verified = await issuing<Tokens>('POST', '/auth/2fa/verify', {
      headers: bearer(session),
      json: { code },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.accessToken).toBeTruthy();
    expect(
      (await issuing('POST', '/auth/2fa/verify', { headers: bearer(session), json: { code } })).status,
    ).toBe(401);
  });

  it('ends the session after 5 wrong codes, limits resends, and expires codes', async () => {
    const session = await loginWithTwoFactor('brute@example.com');
    await issuing('POST', '/auth/2fa/send', { headers: bearer(session) });
    const code = await latestCode(h, 'brute@example.com');
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++)
      await issuing('POST', '/auth/2fa/verify', { headers: bearer(session), json: { code: wrong } });
    expect(
      (await issuing('POST', '/auth/2fa/verify', { headers: bearer(session), json: { code } })).status,
    ).toBe(401);

    const chatty = await loginWithTwoFactor('chatty@example.com');
    for (let i = 0; i < 5; i++)
      expect((await issuing('POST', '/auth/2fa/send', { headers: bearer(chatty) })).status).toBe(202);
    const limited = await issuing('POST', '/auth/2fa/send', { headers: bearer(chatty) });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('60');

    const slow = await loginWithTwoFactor('slow2fa@example.com');
    await issuing('POST', '/auth/2fa/send', { headers: bearer(slow) });
    const slowCode = await latestCode(h, 'slow2fa@example.com');
    await h.advanceClock(5 * 60 + 1);
    expect(
      (await issuing('POST', '/auth/2fa/verify', { headers: bearer(slow), json: { code: slowCode } })).status,
    ).toBe(401);
  });

  it('does not accept one kind of token for another', async () => {
    const session = await loginWithTwoFactor('kinds@example.com');
    const tokens = await registerByEmail('kinds2@example.com');
    expect(
      (await issuing('PUT', '/auth/2fa', { headers: bearer(session), json: { enabled: false } })).status,
    ).toBe(401);
    expect((await issuing('POST', '/auth/2fa/send', { headers: bearer(tokens.accessToken) })).status).toBe(
      401,
    );
    expect((await issuing('POST', '/auth/refresh', { headers: bearer(tokens.accessToken) })).status).toBe(
      401,
    );
    expect((await issuing('POST', '/auth/2fa/send')).status).toBe(401);
    expect((await issuing('PUT', '/auth/2fa', { json: { enabled: true } })).status).toBe(401);
  });
});

describe('refresh tokens', () => {
  it('rotate on every use; reusing an old one revokes the whole login', async () => {
    const first = await registerByEmail('rotate@example.com');
    const second = await issuing<Tokens>('POST', '/auth/refresh', { headers: bearer(first.refreshToken) });
    expect(second.status).toBe(200);
    expect(second.body.refreshToken).not.toBe(first.refreshToken);
    const third = await issuing<Tokens>('POST', '/auth/refresh', {
      headers: bearer(second.body.refreshToken),
    });
    expect(third.status).toBe(200);
    const reused = await issuing('POST', '/auth/refresh', { headers: bearer(first.refreshToken) });
    expect(reused.status).toBe(401);
    expect(
      (await issuing('POST', '/auth/refresh', { headers: bearer(third.body.refreshToken) })).status,
    ).toBe(401);
    expect((await issuing('POST', '/auth/refresh', { headers: bearer('rt_garbage') })).status).toBe(401);
    // The revoked login's access tokens stop working at once, not when they expire.
    const accountsWith = (token: string) => issuing('GET', '/accounts', { headers: bearer(token) });
    expect((await accountsWith(third.body.accessToken)).status).toBe(401);
  });

  it('end with a logout, by access or refresh token: every token of the login stops at once', async () => {
    const accountsWith = (token: string) => issuing('GET', '/accounts', { headers: bearer(token) });
    for (const by of ['accessToken', 'refreshToken'] as const) {
      const tokens = await registerByEmail(`logout-${by}@example.com`);
      const other = await issuing<Tokens>('POST', '/auth/login/email', {
        headers: publicOf(),
        json: { email: `logout-${by}@example.com`, password: STRONG },
      });
      expect((await accountsWith(tokens.accessToken)).status).toBe(200);
      const loggedOut = await issuing('POST', '/auth/logout', { headers: bearer(tokens[by]) });
      expect(loggedOut.status).toBe(204);
      expect((await accountsWith(tokens.accessToken)).status).toBe(401);
      expect((await issuing('POST', '/auth/refresh', { headers: bearer(tokens.refreshToken) })).status).toBe(
        401,
      );
      // Another login of the same customer goes on.
      expect((await accountsWith(other.body.accessToken)).status).toBe(200);
    }
    expect((await issuing('POST', '/auth/logout', { headers: bearer('rt_unknown') })).status).toBe(401);
  });

  it('access tokens last 15 minutes and refresh tokens 30 days', async () => {
    const tokens = await registerByEmail('ttl@example.com');
    await h.advanceClock(15 * 60 + 1);
    expect(
      (await issuing('PUT', '/auth/2fa', { headers: bearer(tokens.accessToken), json: { enabled: false } }))
        .status,
    ).toBe(401);
    const renewed = await issuing<Tokens>('POST', '/auth/refresh', { headers: bearer(tokens.refreshToken) });
    expect(renewed.status).toBe(200);
    await h.advanceClock(30 * 24 * 3600 + 1);
    expect(
      (await issuing('POST', '/auth/refresh', { headers: bearer(renewed.body.refreshToken) })).status,
    ).toBe(401);
  });
});

describe('wallet flow', () => {
  const evmWallet = () => {
    const secretKey = secp256k1.utils.randomSecretKey();
    const address = evmAddressOf(secp256k1.getPublicKey(secretKey, false));
    const sign = (message: string) => {
      const recovered = secp256k1.sign(evmMessageDigest(message), secretKey, {
        prehash: false,
        format: 'recovered',
      });
      // Ethereum order: r ‖ s ‖ v (27/28)
      return `0x${Buffer.from([...recovered.subarray(1), (recovered[0] ?? 0) + 27]).toString('hex')}`;
    };
    return { address, sign };
  };

  it('registers an EVM wallet with a signed EIP-4361 challenge, then logs in', async () => {
    const wallet = evmWallet();
    const challenge = await issuing<{ message: string; challengeId: string }>(
      'POST',
      '/auth/register/wallet/challenge',
      {
        headers: publicOf(),
        json: { walletAddress: wallet.address },
      },
    );
    expect(challenge.status).toBe(200);
    expect(challenge.body.message).toMatch(
      /^127\.0\.0\.1:\d+ wants you to sign in with your Ethereum account:\n0x[0-9a-fA-F]{40}\n/,
    );
    expect(challenge.body.message.split('\n')[1]?.toLowerCase()).toBe(wallet.address);
    expect(challenge.body.message).toMatch(
      /\nVersion: 1\nChain ID: 1\nNonce: [0-9a-f]{24}\nIssued At: .+\nExpiration Time: .+$/,
    );
    const signature = wallet.sign(challenge.body.message);
    const registered = await issuing<Tokens>('POST', '/auth/register/wallet/verify', {
      headers: publicOf(),
      json: { walletAddress: wallet.address, signature },
    });
    expect(registered.status).toBe(201);
    const replayed = await issuing('POST', '/auth/register/wallet/verify', {
      headers: publicOf(),
      json: { walletAddress: wallet.address, signature },
    });
    expect(replayed.status).toBe(401);

    const loginChallenge = await issuing<{ message: string }>('POST', '/auth/login/wallet/challenge', {
      headers: publicOf(),
      json: { walletAddress: wallet.address.toUpperCase().replace('0X', '0x') },
    });
    const login = await issuing<Tokens>('POST', '/auth/login/wallet', {
      headers: publicOf(),
      json: { walletAddress: wallet.address, signature: wallet.sign(loginChallenge.body.message) },
    });
    expect(login.status).toBe(200);
    expect(login.body.customerId).toBe(registered.body.customerId);

    const again = await issuing<{ message: string }>('POST', '/auth/register/wallet', {
      headers: publicOf(),
      json: { walletAddress: wallet.address },
    });
    const duplicate = await issuing<IssuingError>('POST', '/auth/register/wallet/verify', {
      headers: publicOf(),
      json: { walletAddress: wallet.address, signature: wallet.sign(again.body.message) },
    });
    expect(duplicate.status).toBe(409);
    // The signature proved the wallet is the caller's: the answer names its customer.
    expect(duplicate.body).toMatchObject({
      field: 'walletAddress',
      details: { customerId: registered.body.customerId },
    });
    // The partner's backend registering the same wallet is told whose it is, too.
    const byPartner = await issuing<IssuingError>('POST', '/auth/register/partner', {
      headers: asPartner(),
      json: { userId: `wallet-${Date.now()}`, walletAddress: wallet.address },
    });
    expect(byPartner.status).toBe(409);
    expect(byPartner.body.details).toEqual({ customerId: registered.body.customerId });
  });

  it('refuses an email another customer has (409 naming the email), never a 500', async () => {
    await issuing('POST', '/auth/register/partner', {
      headers: asPartner(),
      json: { email: 'taken@example.com' },
    });
    const wallet = evmWallet();
    const challenge = await issuing<{ message: string }>('POST', '/auth/register/wallet/challenge', {
      headers: publicOf(),
      json: { walletAddress: wallet.address },
    });
    const res = await issuing<IssuingError>('POST', '/auth/register/wallet/verify', {
      headers: publicOf(),
      json: {
        walletAddress: wallet.address,
        signature: wallet.sign(challenge.body.message),
        email: 'taken@example.com',
      },
    });
    expect(res.status).toBe(409);
    expect(res.body.field).toBe('email');
  });

  it('refuses a signature by another key, an unknown wallet and malformed input', async () => {
    const wallet = evmWallet();
    const impostor = evmWallet();
    const challenge = await issuing<{ message: string }>('POST', '/auth/register/wallet/challenge', {
      headers: publicOf(),
      json: { walletAddress: wallet.address },
    });
    expect(
      (
        await issuing('POST', '/auth/register/wallet/verify', {
          headers: publicOf(),
          json: { walletAddress: wallet.address, signature: impostor.sign(challenge.body.message) },
        })
      ).status,
    ).toBe(401);
    const stranger = evmWallet();
    const loginChallenge = await issuing<{ message: string }>('POST', '/auth/login/wallet/challenge', {
      headers: publicOf(),
      json: { walletAddress: stranger.address },
    });
    expect(
      (
        await issuing('POST', '/auth/login/wallet', {
          headers: publicOf(),
          json: { walletAddress: stranger.address, signature: stranger.sign(loginChallenge.body.message) },
        })
      ).status,
    ).toBe(401);
    const bad = await issuing<IssuingError>('POST', '/auth/register/wallet/challenge', {
      headers: publicOf(),
      json: { walletAddress: '0xnothex' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.field).toBe('walletAddress');
    expect(
      (
        await issuing<IssuingError>('POST', '/auth/login/wallet', {
          headers: publicOf(),
          json: { walletAddress: wallet.address, signature: 'zz' },
        })
      ).body.field,
    ).toBe('signature');
    expect(
      (await issuing('POST', '/auth/register/wallet/challenge', { json: { walletAddress: wallet.address } }))
        .status,
    ).toBe(401);
  });

  it('refuses a challenge signed after it expired', async () => {
    const wallet = evmWallet();
    const challenge = await issuing<{ message: string }>('POST', '/auth/register/wallet/challenge', {
      headers: publicOf(),
      json: { walletAddress: wallet.address },
    });
    await h.advanceClock(10 * 60 + 1);
    expect(
      (
        await issuing('POST', '/auth/register/wallet/verify', {
          headers: publicOf(),
          json: { walletAddress: wallet.address, signature: wallet.sign(challenge.body.message) },
        })
      ).status,
    ).toBe(401);
  });

  it('registers a MultiversX wallet (ed25519, erd1 address)', async () => {
    const secretKey = ed25519.utils.randomSecretKey();
    const address = bech32Encode('erd', ed25519.getPublicKey(secretKey));
    const challenge = await issuing<{ message: string }>('POST', '/auth/register/wallet/challenge', {
      headers: publicOf(),
      json: { walletAddress: address },
    });
    expect(challenge.body.message).toContain('with your MultiversX account:');
    const signature = Buffer.from(
      ed25519.sign(multiversxMessageDigest(challenge.body.message), secretKey),
    ).toString('hex');
    const registered = await issuing<Tokens>('POST', '/auth/register/wallet/verify', {
      headers: publicOf(),
      json: { walletAddress: address, signature },
    });
    expect(registered.status).toBe(201);
  });
});
