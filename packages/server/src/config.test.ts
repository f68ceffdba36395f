import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from './config.ts';

const problems = (env: Record<string, string>) => {
  try {
    parseConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
};

describe('config', () => {
  it('defaults run a complete sandbox', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      mode: 'sandbox',
      dataDir: './data',
      databaseUrl: undefined,
      publicUrl: 'http://127.0.0.1:8080',
      webhookTimeoutMs: 30_000,
      basePaths: { issuing: '/issuing/v1', payments: '/payments', crypto: '/crypto/api' },
    });
  });

  it('production refuses to start without each explicit secret, one message per setting', () => {
    const found = problems({ TESSERA_MODE: 'production' });
    expect(found).toHaveLength(3);
    expect(found.join('\n')).toMatch(/TESSERA_ADMIN_TOKEN is required/);
    expect(found.join('\n')).toMatch(/TESSERA_ENCRYPTION_KEY is required/);
    expect(found.join('\n')).toMatch(/DATABASE_URL is required/);
    expect(
      problems({
        TESSERA_MODE: 'production',
        TESSERA_ADMIN_TOKEN: 'a'.repeat(32),
        TESSERA_ENCRYPTION_KEY: 'b'.repeat(64),
        DATABASE_URL: 'postgres://u:p@db.example.com:5432/tessera',
      }),
    ).toEqual([]);
  });

  it('names the setting that is wrong', () => {
    expect(problems({ PORT: 'eighty' })[0]).toMatch(/^PORT:/);
    expect(problems({ TESSERA_MODE: 'staging' })[0]).toMatch(/^TESSERA_MODE:/);
    expect(problems({ DATABASE_URL: 'mysql://x' })[0]).toMatch(/^DATABASE_URL:/);
    expect(problems({ TESSERA_ADMIN_TOKEN: 'short' })[0]).toMatch(
      /^TESSERA_ADMIN_TOKEN: must be at least 24/,
    );
    expect(problems({ TESSERA_PAYMENTS_BASE_PATH: 'payments/' })[0]).toMatch(/^TESSERA_PAYMENTS_BASE_PATH:/);
    expect(problems({ TESSERA_SMTP_URL: 'http://mail.example.com' })[0]).toMatch(/^TESSERA_SMTP_URL:/);
    // A key kept less than its answer's day, or mail kept for no day, is refused.
    expect(problems({ TESSERA_IDEMPOTENCY_KEY_RETENTION_DAYS: '0' })[0]).toMatch(
      /^TESSERA_IDEMPOTENCY_KEY_RETENTION_DAYS:/,
    );
    expect(problems({ TESSERA_OUTBOUND_MAIL_RETENTION_DAYS: 'a month' })[0]).toMatch(
      /^TESSERA_OUTBOUND_MAIL_RETENTION_DAYS:/,
    );
    expect(
      parseConfig({ TESSERA_IDEMPOTENCY_KEY_RETENTION_DAYS: '7', TESSERA_OUTBOUND_MAIL_RETENTION_DAYS: '14' })
        .retention,
    ).toEqual({
      webhookAttemptDays: 90,
      sandboxMessageDays: 30,
      riskDays: 400,
      idempotencyKeyDays: 7,
      outboundMailDays: 14,
    });
    expect(problems({ TESSERA_SMTP_URL: 'smtps://u:p@mail.example.com:465' })[0]).toMatch(
      /^TESSERA_MAIL_FROM: required with TESSERA_SMTP_URL/,
    );
    expect(
      parseConfig({
        TESSERA_SMTP_URL: 'smtp://mail.example.com:587',
        TESSERA_MAIL_FROM: 'no-reply@example.com',
      }).smtp,
    ).toEqual({ url: 'smtp://mail.example.com:587', from: 'no-reply@example.com' });
  });

  it('checks the EVM chain settings, naming each one, and never echoes the hot wallet key', () => {
    // Account xpub of BIP39 "abandon … about" at m/44'/60'/0' (as the EVM tests derive it).
    const xpub =
      'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt';
    const evm = (env: Record<string, string>) =>
      problems({ TESSERA_EVM_RPC_URL: 'https://rpc.example.com', TESSERA_EVM_XPUB: xpub, ...env });
    expect(problems({ TESSERA_EVM_RPC_URL: 'ws://rpc.example.com' })[0]).toMatch(/^TESSERA_EVM_RPC_URL:/);
    expect(problems({ TESSERA_EVM_RPC_URL: 'https://rpc.example.com' })[0]).toMatch(
      /^TESSERA_EVM_XPUB: required with TESSERA_EVM_RPC_URL/,
    );
    expect(
      evm({
        TESSERA_EVM_XPUB:
          'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi',
      })[0],
    ).toMatch(/^TESSERA_EVM_XPUB: this is a private key/);
    expect(evm({ TESSERA_EVM_NETWORK: 'eth' })[0]).toMatch(/^TESSERA_EVM_NETWORK:/);
    expect(evm({ TESSERA_EVM_CHAIN_ID: '-1' })[0]).toMatch(/^TESSERA_EVM_CHAIN_ID:/);
    expect(evm({ TESSERA_EVM_CONFIRMATIONS: '0' })[0]).toMatch(/^TESSERA_EVM_CONFIRMATIONS:/);
    for (const [tokens, why] of [
      ['USDC', /not SYMBOL:contractAddress:decimals/],
      ['DOGE:0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238:8', /DOGE is not an asset Tessera knows/],
      ['USDC:0x1234:6', /is not a contract address/],
      ['USDC:0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238:2', /decimals must be a whole number from 6/],
    ] as const) {
      expect(evm({ TESSERA_EVM_TOKENS: tokens })[0], tokens).toMatch(
        new RegExp(`^TESSERA_EVM_TOKENS: .*${why.source}`),
      );
    }
    expect(evm({ TESSERA_EVM_NETWORK: 'SOL' })[0]).toMatch(/^TESSERA_EVM_TOKENS: SOL has no native asset/);
    const secret = 'ab'.repeat(31);
    const badKey = evm({ TESSERA_EVM_REFUND_PRIVATE_KEY: secret });
    expect(badKey[0]).toMatch(/^TESSERA_EVM_REFUND_PRIVATE_KEY: must be a private key of 64 hex/);
    expect(badKey.join('')).not.toContain(secret);
    expect(
      evm({
        TESSERA_EVM_REFUND_PRIVATE_KEY: `0x${'ab'.repeat(32)}`,
        TESSERA_EVM_REFUND_PRIVATE_KEY_FILE: '/k',
      })[0],
    ).toMatch(/^TESSERA_EVM_REFUND_PRIVATE_KEY_FILE: set it or/);
    expect(evm({ TESSERA_EVM_REFUND_PRIVATE_KEY_FILE: '/nonexistent/key' })[0]).toMatch(
      /^TESSERA_EVM_REFUND_PRIVATE_KEY_FILE: cannot read \/nonexistent\/key \(ENOENT\)/,
    );
    const config = parseConfig({
      TESSERA_EVM_RPC_URL: 'https://rpc.example.com',
      TESSERA_EVM_XPUB: xpub,
      TESSERA_EVM_TOKENS: 'usdc:0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238:6',
      TESSERA_EVM_REFUND_PRIVATE_KEY: 'ab'.repeat(32),
    });
    expect(config.evm).toMatchObject({
      network: 'ETH',
      confirmations: 12,
      nativeAsset: 'ETH',
      tokens: [{ asset: 'USDC', contract: '0x1c7d4b196cb0c7b01d743fbc6116a902379c7238', decimals: 6 }],
      refundPrivateKey: `0x${'ab'.repeat(32)}`,
    });
    expect(parseConfig({}).evm).toBeUndefined();
  });

  it('treats empty variables as unset and reads lists', () => {
    const config = parseConfig({
      DATABASE_URL: '',
      TESSERA_WEBHOOK_ALLOWLIST: 'hooks.internal, 10.1.0.0/16',
    });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.webhookAllowlist).toEqual(['hooks.internal', '10.1.0.0/16']);
  });

  it('reads topup limits per currency over the built-in ones, and names a bad entry', () => {
    const config = parseConfig({ TESSERA_TOPUP_LIMITS: 'ISK:700000:2800000, EUR:1000:4000' });
    expect(config.topupLimits.ISK).toEqual({ daily: 700_000n, monthly: 2_800_000n });
    expect(config.topupLimits.EUR).toEqual({ daily: 1000n, monthly: 4000n });
    expect(config.topupLimits.JPY).toEqual({ daily: 800_000n, monthly: 3_200_000n });
    expect(problems({ TESSERA_TOPUP_LIMITS: 'EUR:100' })[0]).toMatch(/^TESSERA_TOPUP_LIMITS: "EUR:100"/);
    expect(problems({ TESSERA_TOPUP_LIMITS: 'EUR:500:100' })[0]).toMatch(/daily ≤ monthly/);
  });
});
