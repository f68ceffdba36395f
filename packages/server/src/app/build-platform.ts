// The platform the APIs are built on: the database, the clock, keys, tenants, webhooks, the ledger, money out
// and the rails, each built once (docs/architecture.md, Layers and rooms). The composition root (server.ts)
// builds this, then each API's module on it, then calls `afterApis`.
import pino, { type DestinationStream } from 'pino';
import type { Config } from '../config.ts';
import { rollUpDailyFigures } from '../pages/console/overview-rollup.ts';
import { Approvals } from '../platform/approvals/approvals.ts';
import { BankAccounts } from '../platform/bank-accounts/bank-accounts.ts';
import { type Clock, SandboxClock, systemClock } from '../platform/clock/clock.ts';
import { CLOCK_CHANNEL, loadSandboxClockOffset } from '../platform/clock/sandbox-clock-state.ts';
import { Sweeps } from '../platform/clock/sweeps.ts';
import { ProcessRegistry, TENANTS_CHANNEL } from '../platform/cluster/process-registry.ts';
import { parseAmlSettings } from '../platform/compliance/aml-scenarios.ts';
import { createCompliance } from '../platform/compliance/compliance.ts';
import { OnboardingInvitations } from '../platform/compliance/onboarding-invitations.ts';
import { unusualVolumeSweep } from '../platform/compliance/unusual-volume.ts';
import { ConsoleUsers } from '../platform/console/console-users.ts';
import { CapabilityTokens } from '../platform/crypto/capability-tokens.ts';
import { derive, Encryptor } from '../platform/crypto/encryption.ts';
import type { StatementObserver } from '../platform/db/connection-scope.ts';
import type { DatabaseHandle } from '../platform/db/database.ts';
import { openDatabase } from '../platform/db/database.ts';
import { createTransact } from '../platform/db/transact.ts';
import { EventsService } from '../platform/events/events-service.ts';
import { Outbox } from '../platform/events/outbox.ts';
import { logDestination, loggerOptions } from '../platform/http/logging.ts';
import { createMetrics } from '../platform/http/metrics.ts';
import { registerQueueMetrics } from '../platform/http/queue-metrics.ts';
import { purgeRateLimitWindows } from '../platform/http/rate-limit-store.ts';
import { IdempotencyStore } from '../platform/idempotency/idempotency-store.ts';
import { JobQueue } from '../platform/jobs/job-queue.ts';
import { Ledger } from '../platform/ledger/ledger.ts';
import { formatAmountIn } from '../platform/money/amount.ts';
import type { Tracing } from '../platform/observability/tracing.ts';
import { startTracing, traced } from '../platform/observability/tracing.ts';
import { sumBalanceDays } from '../platform/payouts/balance-days.ts';
import { payoutHolds } from '../platform/payouts/payout-holds.ts';
import { PayoutLifecycle } from '../platform/payouts/payout-lifecycle.ts';
import { PayoutsService } from '../platform/payouts/payouts-service.ts';
import { TermsStore } from '../platform/payouts/terms.ts';
import { purgeOldRows } from '../platform/retention/retention.ts';
import { BacktestParts } from '../platform/risk/backtest-parts.ts';
import { ipCountryLookup } from '../platform/risk/ip-country.ts';
import { createRisk } from '../platform/risk/risk.ts';
import { MerchantsService } from '../platform/tenants/merchants-service.ts';
import { PartnersService } from '../platform/tenants/partners-service.ts';
import { StoresService } from '../platform/tenants/stores-service.ts';
import { TenantCache } from '../platform/tenants/tenant-cache.ts';
import { TenantDirectory } from '../platform/tenants/tenant-directory.ts';
import { DeliveryEngine } from '../platform/webhooks/delivery-engine.ts';
import { DeliveryRecovery } from '../platform/webhooks/delivery-recovery.ts';
import { HttpSender } from '../platform/webhooks/http-sender.ts';
import { SsrfGuard } from '../platform/webhooks/ssrf-guard.ts';
import type { Platform } from '../platform-services.ts';
import {
  createBankRail,
  noteOtherRailsPayouts,
  registerPayoutSweeps,
} from '../rails/bank/create-bank-rail.ts';
import { ReportingAmounts } from '../rails/fx/reporting-amounts.ts';
import { createRails } from '../rails/rails.ts';
import { TESSERA_VERSION } from '../version.ts';

export interface AppOptions {
  config: Config;
  /** The database to use (the embedded one's URL, or DATABASE_URL) */
  databaseUrl: string;
  adminToken: string;
  encryptionKey: Buffer;
  /** Where logs go (default: stdout) */
  logStream?: DestinationStream;
  /** Overrides the clock (default: a persisted SandboxClock in sandbox mode, the system clock in production) */
  clock?: Clock;
  /**
   * Start the sweep loop and the job queue's maintenance in the background (default: true; tests drive
   * sweeps through the clock; in a cluster only the first worker runs them)
   */
  runBackgroundSweeps?: boolean;
  /** Test-only fault injection: sees every statement of the pool before it is sent */
  observeStatement?: StatementObserver;
  /**
   * Common orders and authorizations are written in one statement (default: true). Tests turn it off to
   * hold those writes to the general path's.
   */
  oneStatementWrites?: boolean;
}

export interface BuiltPlatform {
  platform: Platform;
  /** Once every API has registered its sweeps: money out's sweeps, other processes' news, queue metrics */
  afterApis(): Promise<void>;
  /** What a stop closes beyond the platform's services */
  database: DatabaseHandle;
  tracing: Tracing | undefined;
  closeRails: () => void;
}

export async function buildPlatform(options: AppOptions): Promise<BuiltPlatform> {
  const { config } = options;
  const logger = pino(loggerOptions(config.logLevel), options.logStream ?? logDestination(config.logFormat));
  const tracing = startTracing({ ...config.tracing, serviceVersion: TESSERA_VERSION });
  const database = openDatabase(options.databaseUrl, {
    max: config.databasePoolSize,
    // A query on the pool from inside a transaction can deadlock a full pool: loud in sandbox and tests,
    // reported in production, where failing a request that would most likely have worked is worse.
    onNestedAcquisition:
      config.mode === 'sandbox'
        ? 'throw'
        : (err) => logger.error({ err }, 'nested connection acquisition (a deadlock risk)'),
    ...(options.observeStatement ? { observeStatement: options.observeStatement } : {}),
  });
  const { db } = database;
  const clock =
    options.clock ??
    (config.mode === 'sandbox' ? new SandboxClock(await loadSandboxClockOffset(db)) : systemClock);
  const now = () => clock.now();

  const encryptor = new Encryptor(options.encryptionKey);
  const capabilities = new CapabilityTokens(options.encryptionKey);
  const partners = new PartnersService(clock, encryptor);
  const merchants = new MerchantsService(
    clock,
    encryptor,
    derive(options.encryptionKey, 'tessera/merchant-api-key/v1'),
    config.mode === 'production' ? 'live' : 'test',
  );
  // Before any request: sites from before secret keys were credentials get their key's hash.
  await merchants.backfillSecretKeyHashes(db);
  const stores = new StoresService(clock, encryptor, config.mode);
  const metrics = createMetrics();
  const ssrf = new SsrfGuard(config.mode === 'production', config.webhookAllowlist);
  const processes = new ProcessRegistry(db, options.databaseUrl, logger);
  // Verified credentials and tenant settings; any tenant change anywhere clears it (migration 0025).
  const tenantCache = new TenantCache(clock, {
    ttlMs: config.credentialCacheSeconds * 1000,
    isListening: () => processes.isListening,
  });
  processes.on(TENANTS_CHANNEL, async (payload) => {
    tenantCache.clear();
    await processes.acknowledgeTenantChange(payload ? Number(payload) : 'current');
  });
  // The queue's own maintenance runs where the sweeps do: in one process of a cluster.
  const jobs = await JobQueue.start(options.databaseUrl, logger, {
    maintenance: options.runBackgroundSweeps ?? true,
  });
  const webhookTenants = new TenantDirectory(partners, merchants, stores, tenantCache);
  const deliveries = new DeliveryEngine({
    db,
    clock,
    jobs,
    sender: new HttpSender(ssrf, config.webhookTimeoutMs),
    tenants: webhookTenants,
    logger,
    attemptsCounter: metrics.webhookAttempts,
    failuresCounter: metrics.webhookFailures,
    timeoutMs: config.webhookTimeoutMs,
  });
  await deliveries.start();
  const deliveryRecovery = new DeliveryRecovery({
    db,
    clock,
    engine: deliveries,
    tenants: webhookTenants,
    logger,
  });
  const transact = createTransact(db);
  const risk = createRisk({
    clock,
    cache: tenantCache,
    logger,
    db,
    transact,
    sandbox: config.mode === 'sandbox',
    ipCountry: ipCountryLookup(config.ipCountryDb),
    backtestParts: new BacktestParts(database.pool, config.backtestParts),
    backtestTimeoutMs: config.backtestTimeoutSeconds * 1000,
  });
  const idempotency = new IdempotencyStore(
    db,
    clock,
    encryptor,
    database.createUnit,
    config.retention.idempotencyKeyDays,
  );
  const sweeps = new Sweeps(logger, db, metrics);
  if (clock instanceof SandboxClock) {
    const sandboxClock = clock;
    // Another process advanced the shared clock: adopt it and say so (the advance waits for that).
    processes.on(CLOCK_CHANNEL, async () => {
      sandboxClock.adopt(await loadSandboxClockOffset(db));
      await processes.acknowledge(sandboxClock.offset);
    });
    // A safety net for a lost notification.
    sweeps.register('sandbox-clock', async () => {
      sandboxClock.adopt(await loadSandboxClockOffset(db));
      return 0;
    });
  }
  sweeps.register('rate-limit-windows', () => purgeRateLimitWindows(db));
  sweeps.register('webhook-deliveries', () => deliveries.deliverDue());
  sweeps.register('webhook-waiting-deliveries', () => deliveryRecovery.recoverDue());
  sweeps.register('idempotency-keys', () => idempotency.purgeExpired());
  const retention = purgeOldRows(db, clock, config.retention);
  sweeps.register('webhook-attempt-retention', () => retention.webhookAttempts());
  sweeps.register('sandbox-message-retention', () => retention.sandboxMessages());
  sweeps.register('onboarding-invitation-retention', () => retention.onboardingInvitations());
  sweeps.register('risk-history-retention', () => retention.riskHistory());
  sweeps.register('risk-review-expiry', () => risk.reviews.expireDue());

  const outbox = new Outbox(clock, deliveries);
  const ledger = new Ledger(now);
  sweeps.register('ledger-rollup', () => ledger.rollUp(db));
  sweeps.register('console-daily-figures', () => rollUpDailyFigures(db, clock.now()));
  const approvals = new Approvals(clock, encryptor);
  sweeps.register('approval-expiry', () => approvals.expireDue(db));
  const terms = new TermsStore(clock, tenantCache, config.moneyOut.defaults);
  const payoutLifecycle = new PayoutLifecycle({ ledger, outbox, clock });
  // A payout a risk rule held is released to the bank when approved, failed (its money back) when refused.
  risk.reviews.outcomes.set('payout', async (tx, payoutId, approved) => {
    await payoutLifecycle.step(tx, payoutId, approved ? 'pending' : 'failed', {
      ...(approved ? {} : { failureCode: 'risk_refused' }),
    });
  });
  // Approving a held payout is paying it out: the tenant's payout threshold asks for a second person.
  risk.reviews.approvals.set('payout', async (db, payoutId) => {
    const payout = await db
      .selectFrom('payouts')
      .select(['currency', 'amount'])
      .where('id', '=', payoutId)
      .executeTakeFirstOrThrow();
    const amount = BigInt(payout.amount);
    return {
      action: 'payout',
      money: { currency: payout.currency, amount },
      summary: `release the held payout ${payoutId} of ${formatAmountIn(amount, payout.currency)} ${payout.currency}`,
    };
  });
  sweeps.register('balance-days', () => sumBalanceDays(db, clock.now()));
  const consoleUsers = new ConsoleUsers({ db, encryptor });
  const compliance = createCompliance({
    db,
    clock,
    cache: tenantCache,
    logger,
    threshold: config.screeningThreshold,
    inboxDir: config.sanctionsInboxDir,
    onboarding: config.onboardingRequired,
    aml: parseAmlSettings(config.aml),
    fourEyes: config.complianceFourEyes,
    encryptor,
    goaml: config.goaml && { ...config.goaml, currency: config.reportingCurrency },
  });
  sweeps.register('sanctions-inbox', () => compliance.inbox.collect());
  sweeps.register('sanctions-rescreen', () => compliance.screening.rescreenStep());
  sweeps.register(
    'aml-unusual-volume',
    unusualVolumeSweep({ db, clock, cases: compliance.cases, settings: compliance.aml.unusualVolume }),
  );
  compliance.holds.kinds.set('site', payoutHolds(payoutLifecycle));
  compliance.holds.kinds.set('store', payoutHolds(payoutLifecycle));
  compliance.holds.kinds.set('merchant', payoutHolds(payoutLifecycle));
  const payouts = new PayoutsService({
    db,
    transact,
    clock,
    ledger,
    outbox,
    terms,
    risk,
    holds: compliance.holds,
    profiles: compliance.profiles,
    onRunFailure: (failure, error) => {
      logger.error(
        { err: error, tenant: failure.tenant, currency: failure.currency },
        'payout run: a tenant failed',
      );
      metrics.payoutRunFailures.inc({ tenant: failure.tenant });
    },
  });
  // The bank's files and statements are a rail too: its calls are traced (docs/operations.md, Traces).
  const bank = traced(
    'bank',
    createBankRail({
      config: config.moneyOut.bank,
      db,
      transact,
      clock,
      encryptor,
      lifecycle: payoutLifecycle,
      logger,
      metrics,
    }),
  );
  const {
    rails,
    sandbox: railSandbox,
    readiness: railReadiness,
    chainHeads,
    close: closeRails,
  } = await createRails({
    config,
    db,
    clock,
    transact,
    encryptor,
    encryptionKey: options.encryptionKey,
    capabilities,
    logger,
    sweeps,
    processes,
  });
  // Amounts in the reporting currency for every decision point's signal, from rates kept a minute old.
  const reporting = new ReportingAmounts({ fx: rails.fx, db, currency: config.reportingCurrency, logger });
  await reporting.start();
  risk.engine.useReportingAmounts((amount, currency) => reporting.amountIn(amount, currency));
  const platform: Platform = {
    config,
    db,
    clock,
    risk,
    compliance,
    capabilities,
    bankAccounts: new BankAccounts(encryptor, clock, risk, compliance.screening),
    moneyOut: { terms, payouts, lifecycle: payoutLifecycle, bank },
    logger,
    transact,
    ledger,
    outbox,
    events: new EventsService(db, transact, deliveries),
    deliveries,
    partners,
    merchants,
    stores,
    tenantCache,
    idempotency,
    createUnit: database.createUnit,
    sweeps,
    processes,
    jobs,
    metrics,
    ssrf,
    rails,
    railSandbox,
    railReadiness,
    encryptor,
    encryptionKey: options.encryptionKey,
    oneStatementWrites: options.oneStatementWrites ?? true,
    consoleUsers,
    onboardingInvitations: new OnboardingInvitations({
      db,
      clock,
      notifier: rails.notifier,
      publicUrl: config.publicUrl,
      profiles: compliance.profiles,
      documents: compliance.documents,
      users: consoleUsers,
    }),
    approvals,
  };

  const afterApis = async () => {
    await processes.start();
    // Money out runs after the APIs' own sweeps, so what they captured or settled is paid the same day.
    registerPayoutSweeps(sweeps, payouts, bank);
    await noteOtherRailsPayouts(db, config.moneyOut.bank, logger);
    registerQueueMetrics(metrics.registry, {
      db,
      pool: database.pool,
      poolMax: config.databasePoolSize,
      clock,
      chainHeads,
    });
  };
  const close = () => {
    reporting.stop();
    closeRails();
  };
  return { platform, afterApis, database, tracing, closeRails: close };
}
