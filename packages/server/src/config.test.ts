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
