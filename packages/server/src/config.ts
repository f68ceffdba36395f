// One zod schema over the environment, parsed once in main.ts; everything else receives Config.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from './config-error.ts';
import { parseTopupLimits, type TopupLimits } from './issuing/topups/topup-limits.ts';
import {
  COUNTRY_LIST_PATTERN,
  pairPattern,
  STRUCTURING_PATTERN,
} from './platform/compliance/aml-scenarios.ts';
import { tracesUrlFrom } from './platform/observability/tracing.ts';
import { type MoneyOutConfig, parseMoneyOutConfig } from './platform/payouts/money-out-config.ts';
import { type EvmConfig, parseEvmConfig } from './rails/chain/evm/evm-config.ts';

const emptyToUndefined = (value: unknown) => (value === '' ? undefined : value);
const optionalText = z.preprocess(emptyToUndefined, z.string().optional());

const basePath = z
  .string()
  .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, 'must start with "/" and not end with "/"');

export const ConfigSchema = z.object({
  /** HTTP port for all APIs, pages, admin and docs (default: 8080) */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Bind address (default: 127.0.0.1) */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** `sandbox` runs every rail on its simulator; `production` requires explicit secrets (default: sandbox) */
  TESSERA_MODE: z.enum(['sandbox', 'production']).default('sandbox'),
  /** Embedded Postgres data and generated sandbox secrets (default: ./data) */
  TESSERA_DATA_DIR: z.string().min(1).default('./data'),
  /** External Postgres; when unset the embedded one runs (default: unset) */
  DATABASE_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  /** Operator token for /admin and /sandbox (default: generated in sandbox, required in production) */
  TESSERA_ADMIN_TOKEN: z.preprocess(
    emptyToUndefined,
    z.string().min(24, 'must be at least 24 characters').optional(),
  ),
  /** 32-byte key (64 hex characters or base64) for data encrypted at rest (default: generated in sandbox) */
  TESSERA_ENCRYPTION_KEY: optionalText,
  /** Base of the URLs handed to buyers (default: http://HOST:PORT) */
  TESSERA_PUBLIC_URL: z.preprocess(emptyToUndefined, z.url().optional()),
  /** pino log level (default: info) */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // auto: one pretty line per entry when stdout is a terminal, JSON lines otherwise
  TESSERA_LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /** Requests per minute per credential (or per IP when anonymous) (default: 1200) */
  TESSERA_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(1200),
  /** Days a delivered webhook's attempts are kept (default: 90) */
  TESSERA_WEBHOOK_ATTEMPT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  /** Days a sandbox message (the sandbox's mail and SMS inbox) is kept (default: 30) */
  TESSERA_SANDBOX_MESSAGE_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Days risk signals and decisions are kept: a backtest reaches this far back (default: 400) */
  TESSERA_RISK_RETENTION_DAYS: z.coerce.number().int().min(31).max(3650).default(400),
  /** Connections one backtest judges its history on, a slice of the period each (default: the cores, at most 4) */
  TESSERA_BACKTEST_PARTS: z.coerce.number().int().min(1).max(32).optional(),
  /** How long one backtest may run before it is stopped and refused (seconds, default 120) */
  TESSERA_BACKTEST_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(120),
  /** The score (0–1) at which a screened name matches a sanctions list's entry (default: 0.9, docs/compliance.md) */
  TESSERA_SCREENING_THRESHOLD: z.coerce.number().min(0.5).max(1).default(0.9),
  /** Where official sanctions list files are dropped to be imported (default: DATA_DIR/sanctions/inbox) */
  TESSERA_SANCTIONS_INBOX_DIR: optionalText,
  /** What waits for a tenant's business profile to be approved: off, payouts, or charges and payouts (default: payouts in production, off in the sandbox) */
  TESSERA_ONBOARDING_REQUIRED: z.enum(['off', 'payouts', 'charges']).optional(),
  /** The structuring scenario: THRESHOLD:COUNT:HOURS, or off (default 1000:3:24, docs/compliance.md) */
  TESSERA_AML_STRUCTURING: z
    .string()
    .regex(STRUCTURING_PATTERN, 'THRESHOLD:COUNT:HOURS (e.g. 1000:3:24) or off')
    .default('1000:3:24'),
  /** Many cards: COUNT new cards of one cardholder within DAYS, or off (default 5:30) */
  TESSERA_AML_MANY_CARDS: z
    .string()
    .regex(pairPattern(99, 365), 'COUNT:DAYS (e.g. 5:30) or off')
    .default('5:30'),
  /** Rapid movement: PERCENT of a topup spent by card within HOURS, or off (default 80:24) */
  TESSERA_AML_RAPID_MOVEMENT: z
    .string()
    .regex(pairPattern(100, 720), 'PERCENT:HOURS (e.g. 80:24) or off')
    .refine((v) => v === 'off' || Number(v.split(':')[0]) <= 100, 'PERCENT is at most 100')
    .default('80:24'),
  /** Unusual volume: a tenant's day over FACTOR times its 90-day average and at least MINIMUM, or off (default 5:1000) */
  TESSERA_AML_UNUSUAL_VOLUME: z
    .string()
    .regex(pairPattern(99, 999_999_999), 'FACTOR:MINIMUM (e.g. 5:1000) or off')
    .default('5:1000'),
  /** Refunds over captures: COUNT refunds and credits within DAYS exceeding the captures, or off (default 3:30) */
  TESSERA_AML_REFUNDS_OVER_CAPTURES: z
    .string()
    .regex(pairPattern(999, 365), 'COUNT:DAYS (e.g. 3:30) or off')
    .default('3:30'),
  /** High-risk countries: ISO codes, comma-separated, or off (default: FATF's call for action, KP,IR,MM) */
  TESSERA_AML_HIGH_RISK_COUNTRIES: z
    .string()
    .regex(COUNTRY_LIST_PATTERN, 'ISO 3166 alpha-2 codes, comma-separated (e.g. KP,IR,MM), or off')
    .default('KP,IR,MM'),
  /** Which compliance case decisions need a second person: off, cleared, or all (default: off, docs/compliance.md) */
  TESSERA_COMPLIANCE_FOUR_EYES: z.enum(['off', 'cleared', 'all']).default('off'),
  /** The reporting entity's id the FIU registered the operator under, for goAML reports (docs/compliance.md) */
  TESSERA_GOAML_RENTITY_ID: z.coerce.number().int().min(1).max(2_147_483_647).optional(),
  /** The reporting entity's branch, where the FIU registered one (goAML's rentity_branch) */
  TESSERA_GOAML_RENTITY_BRANCH: z.string().trim().min(1).max(255).optional(),
  /** The goAML user code reports are made by (reporting_user_code), where the FIU's schema wants one */
  TESSERA_GOAML_REPORTING_USER: z.string().trim().min(4).max(50).optional(),
  TESSERA_IP_COUNTRY_DB: z.string().min(1).optional(),
  TESSERA_REPORTING_CURRENCY: z
    .string()
    .regex(/^[A-Z]{3,5}$/, 'an asset code such as EUR or USD')
    .default('EUR'),
  /** Days a used Idempotency-Key is refused for another run; its answer is replayed for the first one (default: 30) */
  TESSERA_IDEMPOTENCY_KEY_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Days sent and given-up outbound mail is kept (default: 30) */
  TESSERA_OUTBOUND_MAIL_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  /** Comma-separated hosts or CIDRs that webhooks may reach although private (default: none) */
  TESSERA_WEBHOOK_ALLOWLIST: z.string().default(''),
  /** Timeout of one webhook HTTP attempt in ms; the issuing spec fixes 30 s (default: 30000) */
  TESSERA_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
  /** How long a stop (SIGTERM, SIGINT) may take to drain before it cuts what is left, in ms (default: 10000) */
  TESSERA_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(10_000),
  /** Connections in each process's database pool (default: 20) */
  TESSERA_DB_POOL_SIZE: z.coerce.number().int().min(2).max(500).default(20),
  /** HTTP worker processes over one database (node:cluster) (default: the cores in production, 1 in sandbox) */
  TESSERA_WORKERS: z.preprocess(emptyToUndefined, z.coerce.number().int().min(1).max(256).optional()),
  /** How long a verified credential is trusted without news of a tenant change, in seconds; 0 turns the cache off (default: 30) */
  TESSERA_CREDENTIAL_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /** Real-time interval of the background sweeps (expiry, retries) in ms (default: 1000) */
  TESSERA_SWEEP_INTERVAL_MS: z.coerce.number().int().positive().default(1000),
  /** SMTP server for mail to people, `smtp[s]://user:pass@host:port`; unset: mail is kept in the sandbox inbox (default: unset) */
  TESSERA_SMTP_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^smtps?$/ }).optional()),
  /** The From of that mail, `no-reply@example.com` or `"Example" <no-reply@example.com>`; required with TESSERA_SMTP_URL (default: unset) */
  TESSERA_MAIL_FROM: optionalText,
  /** OpenTelemetry: the OTLP/HTTP collector's base URL; traces go to …/v1/traces (default: unset: no traces) */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /** The traces URL itself, when it is not the base URL plus /v1/traces (default: unset) */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.preprocess(
    emptyToUndefined,
    z.url({ protocol: /^https?$/ }).optional(),
  ),
  /** The service name traces carry (default: tessera) */
  OTEL_SERVICE_NAME: z.string().trim().min(1).max(100).default('tessera'),
  /** `true` turns tracing off whatever the endpoint (default: unset) */
  OTEL_SDK_DISABLED: optionalText,
  /** `none` turns tracing off; `otlp` (default) exports over OTLP/HTTP */
  OTEL_TRACES_EXPORTER: optionalText,
  /** JSON-RPC URL (http/https) of an EVM node; when set, the EVM network's assets are paid on that chain (default: unset: simulated) */
  TESSERA_EVM_RPC_URL: z.preprocess(emptyToUndefined, z.url({ protocol: /^https?$/ }).optional()),
  /** The network code the crypto API shows for that chain (default: ETH) */
  TESSERA_EVM_NETWORK: z
    .string()
    .regex(/^[A-Z0-9_]+$/, 'must be an upper-case network code')
    .default('ETH'),
  /** The chain id the node must serve (default: unset: the first one served is remembered) */
  TESSERA_EVM_CHAIN_ID: z.preprocess(emptyToUndefined, z.coerce.number().int().positive().optional()),
  /** The operator's account-level extended public key (m/44'/60'/0'); deposit addresses are derived at 0/i; required with TESSERA_EVM_RPC_URL (default: unset) */
  TESSERA_EVM_XPUB: optionalText,
  /** Blocks after which an EVM payment is final (default: 12) */
  TESSERA_EVM_CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).default(12),
  /** ERC-20 tokens accepted, SYMBOL:contractAddress:decimals, comma-separated (default: none) */
  TESSERA_EVM_TOKENS: z.string().default(''),
  /** The hot wallet's private key that sends accepted refunds (default: unset: refund payouts wait) */
  TESSERA_EVM_REFUND_PRIVATE_KEY: optionalText,
  /** A file holding that key instead (default: unset) */
  TESSERA_EVM_REFUND_PRIVATE_KEY_FILE: optionalText,
  /** The card program's BIN (6 to 8 digits); issued card numbers start with it (default: 489537) */
  TESSERA_ISSUING_BIN: z
    .string()
    .regex(/^\d{6,8}$/, 'must be 6 to 8 digits')
    .default('489537'),
  /** How long a cardholder has to answer a 3D Secure challenge, in seconds (default: 600) */
  TESSERA_3DS_TIMEOUT_SECONDS: z.coerce.number().int().positive().default(600),
  /** How long an authorization hold lasts without clearing, in seconds (default: 7 days) */
  TESSERA_AUTHORIZATION_HOLD_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(7 * 24 * 3600),
  /** How far above the authorized amount its clearings may post together, in percent (tips, fuel; default: 20) */
  TESSERA_ISSUING_CLEARING_TOLERANCE_PERCENT: z.coerce.number().min(0).max(100).default(20),
  /** Whether a cardholder dispute credits the account while the network reviews it (default: true) */
  TESSERA_ISSUING_DISPUTE_PROVISIONAL_CREDIT: z
    .enum(['true', 'false'])
    .default('true')
    .transform((value) => value === 'true'),
  /** The dispute fee a site pays with every chargeback, in major units of the payment's currency (default: 15) */
  TESSERA_DISPUTE_FEE: z.coerce.number().int().min(0).max(1000).default(15),
  /** How long a payments authorization waits for its capture before it is released (default: 7 days) */
  TESSERA_PAYMENTS_AUTHORIZATION_SECONDS: z.coerce
    .number()
    .int()
    .positive()
    .default(7 * 24 * 3600),
  /** Topup limits per currency as CODE:daily:monthly, comma-separated, over the built-in ones (default: none) */
  TESSERA_TOPUP_LIMITS: z.string().default(''),
  /** Fee on captures and crypto payments without a schedule of their own, in basis points (default: 0) */
  TESSERA_FEE_PERCENT_BPS: z.coerce.number().int().min(0).max(10_000).default(0),
  /** Fixed fee per currency on top of it, `EUR:0.25,USD:0.30` (default: none) */
  TESSERA_FEE_FIXED: z.string().default(''),
  /** When tenants are paid without a schedule of their own: daily, weekly (Mondays), monthly (the 1st) or manual (default: daily) */
  TESSERA_PAYOUT_INTERVAL: z.enum(['daily', 'weekly', 'monthly', 'manual']).default('daily'),
  /** Days after a capture that its money becomes available to pay out (default: 2) */
  TESSERA_PAYOUT_DELAY_DAYS: z.coerce.number().int().min(0).max(60).default(2),
  /** The least a scheduled payout pays, in major units of its currency (default: 0.01) */
  TESSERA_PAYOUT_MINIMUM: z
    .string()
    .regex(/^\d{1,9}(\.\d{1,8})?$/, 'must be an amount like 10.00')
    .default('0.01'),
  /** The bank payouts go through: `simulator` (paid the next sandbox day) or `iso20022` (pain.001 files out, statements in) (default: simulator) */
  TESSERA_BANK_RAIL: z.enum(['simulator', 'iso20022']).default('simulator'),
  /** Where pain.001 payment files are written for the bank connection to send (default: DATA_DIR/bank/outbox) */
  TESSERA_BANK_OUTBOX_DIR: optionalText,
  /** Where the bank connection drops pain.002 and camt.053/camt.054 files for Tessera to read (default: DATA_DIR/bank/inbox) */
  TESSERA_BANK_INBOX_DIR: optionalText,
  /** The operator's account payouts are paid from: IBAN (default in sandbox: a sample IBAN; required with iso20022 in production) */
  TESSERA_BANK_DEBTOR_IBAN: optionalText,
  /** Its BIC (default: none, NOTPROVIDED in the file) */
  TESSERA_BANK_DEBTOR_BIC: optionalText,
  /** Its holder's name (default: Tessera) */
  TESSERA_BANK_DEBTOR_NAME: z.string().min(1).max(70).default('Tessera'),
  /** Base path of the card issuing API (default: /issuing/v1) */
  TESSERA_ISSUING_BASE_PATH: basePath.default('/issuing/v1'),
  /** Base path of the payments API (default: /payments) */
  TESSERA_PAYMENTS_BASE_PATH: basePath.default('/payments'),
  /** Base path of the crypto merchant API (default: /crypto/api) */
  TESSERA_CRYPTO_BASE_PATH: basePath.default('/crypto/api'),
});

export type ConfigInput = z.input<typeof ConfigSchema>;
type ParsedEnv = z.output<typeof ConfigSchema>;

/** The parsed configuration the rest of the program receives. */
export interface Config {
  port: number;
  host: string;
  mode: 'sandbox' | 'production';
  dataDir: string;
  databaseUrl: string | undefined;
  adminToken: string | undefined;
  encryptionKey: string | undefined;
  publicUrl: string;
  logLevel: ParsedEnv['LOG_LEVEL'];
  logFormat: ParsedEnv['TESSERA_LOG_FORMAT'];
  /** OpenTelemetry traces: where they go (undefined: off) and the service they name */
  tracing: { tracesUrl: string | undefined; serviceName: string };
  rateLimitPerMinute: number;
  /** How long the tables that only grow keep their rows, in days */
  retention: {
    webhookAttemptDays: number;
    sandboxMessageDays: number;
    riskDays: number;
    idempotencyKeyDays: number;
    outboundMailDays: number;
  };
  /** An IP-to-country database in the MaxMind DB format, for risk rules' `ip_country` (docs/risk.md) */
  ipCountryDb: string | undefined;
  /** Connections (and slices of the period) a backtest judged in the database runs on (docs/risk.md) */
  backtestParts: number;
  backtestTimeoutSeconds: number;
  /** The score at which a screened name matches a sanctions list's entry (docs/compliance.md) */
  screeningThreshold: number;
  /** Where sanctions list files are dropped, imported by a sweep (docs/compliance.md) */
  sanctionsInboxDir: string;
  /** What waits for a tenant's business profile to be approved (docs/compliance.md, Onboarding) */
  onboardingRequired: 'off' | 'payouts' | 'charges';
  /** The structuring scenario's settings, as written (docs/compliance.md, Monitoring) */
  /** The monitoring scenarios' settings as configured (aml-scenarios.ts parses them) */
  aml: {
    structuring: string;
    manyCards: string;
    rapidMovement: string;
    unusualVolume: string;
    refundsOverCaptures: string;
    highRiskCountries: string;
  };
  complianceFourEyes: 'off' | 'cleared' | 'all';
  /** goAML's reporting entity, when configured (its reports are refused until it is) */
  goaml: { rentityId: number; branch: string | null; reportingUser: string | null } | null;
  /** The currency risk rules compare amounts in (`amount_reporting`) */
  reportingCurrency: string;
  webhookAllowlist: string[];
  webhookTimeoutMs: number;
  sweepIntervalMs: number;
  databasePoolSize: number;
  /** HTTP worker processes `serve` runs */
  workers: number;
  credentialCacheSeconds: number;
  shutdownTimeoutMs: number;
  basePaths: { issuing: string; payments: string; crypto: string };
  issuingBin: string;
  threeDsTimeoutSeconds: number;
  authorizationHoldSeconds: number;
  issuingClearingTolerancePercent: number;
  issuingDisputeProvisionalCredit: boolean;
  disputeFeeMajor: number;
  paymentsAuthorizationSeconds: number;
  /** Per currency, in major units */
  topupLimits: Record<string, TopupLimits>;
  /** Mail by SMTP, when configured */
  smtp: { url: string; from: string } | undefined;
  /** A real EVM chain, when configured */
  evm: EvmConfig | undefined;
  moneyOut: MoneyOutConfig;
}

export { ConfigError };

export function parseConfig(env: Record<string, string | undefined>): Config {
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const e = parsed.data;
  let topupLimits: Record<string, TopupLimits>;
  try {
    topupLimits = parseTopupLimits(e.TESSERA_TOPUP_LIMITS);
  } catch (err) {
    throw new ConfigError([`TESSERA_TOPUP_LIMITS: ${(err as Error).message}`]);
  }
  if (e.TESSERA_SMTP_URL && !e.TESSERA_MAIL_FROM) {
    throw new ConfigError(['TESSERA_MAIL_FROM: required with TESSERA_SMTP_URL (the From of mail to people)']);
  }
  const evmProblems: string[] = [];
  const evm = parseEvmConfig(e, evmProblems);
  if (evmProblems.length > 0) throw new ConfigError(evmProblems);
  const moneyOutProblems: string[] = [];
  const moneyOut = parseMoneyOutConfig(e, moneyOutProblems);
  if (moneyOutProblems.length > 0) throw new ConfigError(moneyOutProblems);
  if (e.TESSERA_MODE === 'production') {
    // Production never invents secrets: a generated key would silently make stored card data unreadable
    // on the next host, and a generated admin token would be printed to logs.
    const missing: string[] = [];
    if (!e.TESSERA_ADMIN_TOKEN)
      missing.push('TESSERA_ADMIN_TOKEN is required in production (the operator token)');
    if (!e.TESSERA_ENCRYPTION_KEY)
      missing.push(
        'TESSERA_ENCRYPTION_KEY is required in production (32 bytes as 64 hex characters or base64)',
      );
    if (!e.DATABASE_URL)
      missing.push('DATABASE_URL is required in production (the embedded Postgres is for sandboxes)');
    if (missing.length > 0) throw new ConfigError(missing);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    mode: e.TESSERA_MODE,
    dataDir: e.TESSERA_DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    adminToken: e.TESSERA_ADMIN_TOKEN,
    encryptionKey: e.TESSERA_ENCRYPTION_KEY,
    publicUrl: (e.TESSERA_PUBLIC_URL ?? `http://${e.HOST}:${e.PORT}`).replace(/\/$/, ''),
    logLevel: e.LOG_LEVEL,
    logFormat: e.TESSERA_LOG_FORMAT,
    tracing: {
      tracesUrl: tracesUrlFrom({
        OTEL_EXPORTER_OTLP_ENDPOINT: e.OTEL_EXPORTER_OTLP_ENDPOINT,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
        OTEL_SDK_DISABLED: e.OTEL_SDK_DISABLED,
        OTEL_TRACES_EXPORTER: e.OTEL_TRACES_EXPORTER,
      }),
      serviceName: e.OTEL_SERVICE_NAME,
    },
    rateLimitPerMinute: e.TESSERA_RATE_LIMIT_PER_MINUTE,
    retention: {
      webhookAttemptDays: e.TESSERA_WEBHOOK_ATTEMPT_RETENTION_DAYS,
      sandboxMessageDays: e.TESSERA_SANDBOX_MESSAGE_RETENTION_DAYS,
      riskDays: e.TESSERA_RISK_RETENTION_DAYS,
      idempotencyKeyDays: e.TESSERA_IDEMPOTENCY_KEY_RETENTION_DAYS,
      outboundMailDays: e.TESSERA_OUTBOUND_MAIL_RETENTION_DAYS,
    },
    ipCountryDb: e.TESSERA_IP_COUNTRY_DB,
    screeningThreshold: e.TESSERA_SCREENING_THRESHOLD,
    sanctionsInboxDir: e.TESSERA_SANCTIONS_INBOX_DIR ?? join(e.TESSERA_DATA_DIR, 'sanctions', 'inbox'),
    onboardingRequired:
      e.TESSERA_ONBOARDING_REQUIRED ?? (e.TESSERA_MODE === 'production' ? 'payouts' : 'off'),
    aml: {
      structuring: e.TESSERA_AML_STRUCTURING,
      manyCards: e.TESSERA_AML_MANY_CARDS,
      rapidMovement: e.TESSERA_AML_RAPID_MOVEMENT,
      unusualVolume: e.TESSERA_AML_UNUSUAL_VOLUME,
      refundsOverCaptures: e.TESSERA_AML_REFUNDS_OVER_CAPTURES,
      highRiskCountries: e.TESSERA_AML_HIGH_RISK_COUNTRIES,
    },
    complianceFourEyes: e.TESSERA_COMPLIANCE_FOUR_EYES,
    goaml:
      e.TESSERA_GOAML_RENTITY_ID === undefined
        ? null
        : {
            rentityId: e.TESSERA_GOAML_RENTITY_ID,
            branch: e.TESSERA_GOAML_RENTITY_BRANCH ?? null,
            reportingUser: e.TESSERA_GOAML_REPORTING_USER ?? null,
          },
    backtestParts: e.TESSERA_BACKTEST_PARTS ?? Math.min(4, availableParallelism()),
    backtestTimeoutSeconds: e.TESSERA_BACKTEST_TIMEOUT_SECONDS,
    reportingCurrency: e.TESSERA_REPORTING_CURRENCY,
    webhookAllowlist: e.TESSERA_WEBHOOK_ALLOWLIST.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    webhookTimeoutMs: e.TESSERA_WEBHOOK_TIMEOUT_MS,
    sweepIntervalMs: e.TESSERA_SWEEP_INTERVAL_MS,
    databasePoolSize: e.TESSERA_DB_POOL_SIZE,
    workers: e.TESSERA_WORKERS ?? (e.TESSERA_MODE === 'production' ? availableParallelism() : 1),
    credentialCacheSeconds: e.TESSERA_CREDENTIAL_CACHE_SECONDS,
    shutdownTimeoutMs: e.TESSERA_SHUTDOWN_TIMEOUT_MS,
    issuingBin: e.TESSERA_ISSUING_BIN,
    smtp: e.TESSERA_SMTP_URL ? { url: e.TESSERA_SMTP_URL, from: e.TESSERA_MAIL_FROM ?? '' } : undefined,
    evm,
    moneyOut,
    threeDsTimeoutSeconds: e.TESSERA_3DS_TIMEOUT_SECONDS,
    authorizationHoldSeconds: e.TESSERA_AUTHORIZATION_HOLD_SECONDS,
    issuingClearingTolerancePercent: e.TESSERA_ISSUING_CLEARING_TOLERANCE_PERCENT,
    issuingDisputeProvisionalCredit: e.TESSERA_ISSUING_DISPUTE_PROVISIONAL_CREDIT,
    disputeFeeMajor: e.TESSERA_DISPUTE_FEE,
    paymentsAuthorizationSeconds: e.TESSERA_PAYMENTS_AUTHORIZATION_SECONDS,
    topupLimits,
    basePaths: {
      issuing: e.TESSERA_ISSUING_BASE_PATH,
      payments: e.TESSERA_PAYMENTS_BASE_PATH,
      crypto: e.TESSERA_CRYPTO_BASE_PATH,
    },
  };
}
