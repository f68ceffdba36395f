// The composition root: builds db, clock, rails and services once, mounts the three APIs,
// the admin and sandbox APIs and the operational routes, and returns { app, services, close }.
// Tests call it with overrides; main.ts calls it once.

import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import pino, { type DestinationStream } from 'pino';
import qs from 'qs';
import { requireAdmin } from './admin/http/admin-auth.ts';
import { registerApprovalThresholdRoutes } from './admin/http/approval-thresholds-routes.ts';
import { registerAuditRoutes } from './admin/http/audit-routes.ts';
import { registerBankAccountRoutes as registerAdminBankAccountRoutes } from './admin/http/bank-accounts-routes.ts';
import { registerConsoleUserRoutes } from './admin/http/console-users-routes.ts';
import { registerEventRoutes } from './admin/http/events-routes.ts';
import { registerIssuingCardRoutes } from './admin/http/issuing-cards-routes.ts';
import { registerMerchantRoutes } from './admin/http/merchants-routes.ts';
import { registerMoneyOutRoutes } from './admin/http/money-out-routes.ts';
import { registerPartnerRoutes } from './admin/http/partners-routes.ts';
import { presentAdminError } from './admin/http/present-error.ts';
import { registerStoreRoutes } from './admin/http/stores-routes.ts';
import type { Config } from './config.ts';
import { cryptoApi } from './crypto/crypto-api.ts';
import { createCryptoServices } from './crypto/crypto-services.ts';
import { registerPayPageRoutes } from './crypto/pages/pay-page-routes.ts';
import { registerRefundPageRoutes } from './crypto/pages/refund-page-routes.ts';
import { issuingApi } from './issuing/issuing-api.ts';
import { createIssuingServices } from './issuing/issuing-services.ts';
import { registerTopupPageRoutes } from './issuing/pages/topup-page-routes.ts';
import { registerConsole } from './pages/console/console.ts';
import { rollUpDailyFigures } from './pages/console/overview-rollup.ts';
import { registerGuideRoutes } from './pages/guide-routes.ts';
import { registerLandingPageRoutes } from './pages/landing-page-routes.ts';
import { HostedCheckout } from './payments/checkout/hosted-checkout.ts';
import { registerCheckoutPageRoutes } from './payments/pages/checkout-page-routes.ts';
import { registerHostedCheckoutRoutes } from './payments/pages/hosted-checkout-routes.ts';
import { paymentsApi } from './payments/payments-api.ts';
import { createPaymentsServices } from './payments/payments-services.ts';
import { Approvals } from './platform/approvals/approvals.ts';
import { addAuditHooks } from './platform/audit/audit-hooks.ts';
import { BankAccounts } from './platform/bank-accounts/bank-accounts.ts';
import { type Clock, SandboxClock, systemClock } from './platform/clock/clock.ts';
import { CLOCK_CHANNEL, loadSandboxClockOffset } from './platform/clock/sandbox-clock-state.ts';
import { Sweeps } from './platform/clock/sweeps.ts';
import { ProcessRegistry, TENANTS_CHANNEL } from './platform/cluster/process-registry.ts';
import { ConsoleUsers } from './platform/console/console-users.ts';
import { CapabilityTokens } from './platform/crypto/capability-tokens.ts';
import { derive, Encryptor } from './platform/crypto/encryption.ts';
import type { StatementObserver } from './platform/db/connection-scope.ts';
import { openDatabase } from './platform/db/database.ts';
import { createTransact } from './platform/db/transact.ts';
import { DomainError } from './platform/errors/domain-error.ts';
import { EventsService } from './platform/events/events-service.ts';
import { Outbox } from './platform/events/outbox.ts';
import { type ApiScopeOptions, asZod, mountApi, presentError } from './platform/http/api-scope.ts';
import {
  acceptEmptyJson,
  clientErrorHandler,
  frameworkErrorHandler,
  refuseLongUrls,
  refuseUnstorableStrings,
  type ScopePresenters,
} from './platform/http/edge.ts';
import { logDestination, loggerOptions, OneLinePerRequest } from './platform/http/logging.ts';
import { createMetrics } from './platform/http/metrics.ts';
import { registerOperationalRoutes } from './platform/http/operational-routes.ts';
import { registerQueueMetrics } from './platform/http/queue-metrics.ts';
import { rateLimitKey } from './platform/http/rate-limit-key.ts';
import { postgresRateLimitStore, purgeRateLimitWindows } from './platform/http/rate-limit-store.ts';
import { addSecurityHeaders } from './platform/http/security-headers.ts';
import { IdempotencyStore } from './platform/idempotency/idempotency-store.ts';
import { newId } from './platform/ids.ts';
import { JobQueue } from './platform/jobs/job-queue.ts';
import { Ledger } from './platform/ledger/ledger.ts';
import { addRequestSpans } from './platform/observability/request-spans.ts';
import { startTracing, traced } from './platform/observability/tracing.ts';
import { addSandboxBanner } from './platform/pages/html.ts';
import { registerPageAssets } from './platform/pages/page-assets.ts';
import { sumBalanceDays } from './platform/payouts/balance-days.ts';
import { PayoutLifecycle } from './platform/payouts/payout-lifecycle.ts';
import { PayoutsService } from './platform/payouts/payouts-service.ts';
import { TermsStore } from './platform/payouts/terms.ts';
import { purgeOldRows } from './platform/retention/retention.ts';
import { MerchantsService } from './platform/tenants/merchants-service.ts';
import { PartnersService } from './platform/tenants/partners-service.ts';
import { StoresService } from './platform/tenants/stores-service.ts';
import { TenantCache } from './platform/tenants/tenant-cache.ts';
import { TenantDirectory } from './platform/tenants/tenant-directory.ts';
import { DeliveryEngine } from './platform/webhooks/delivery-engine.ts';
import { DeliveryRecovery } from './platform/webhooks/delivery-recovery.ts';
import { HttpSender } from './platform/webhooks/http-sender.ts';
import { SsrfGuard } from './platform/webhooks/ssrf-guard.ts';
import type { PlatformServices } from './platform-services.ts';
import {
  createBankRail,
  noteOtherRailsPayouts,
  registerPayoutSweeps,
} from './rails/bank/create-bank-rail.ts';
import { registerAcsPageRoutes } from './rails/card-network/acs-page-routes.ts';
import { registerKycPageRoutes } from './rails/kyc-vendor/kyc-page-routes.ts';
import { createRails } from './rails/rails.ts';
import { registerBankSandboxRoutes } from './sandbox/http/bank-routes.ts';
import { registerClockRoutes } from './sandbox/http/clock-routes.ts';
import { registerCryptoSandboxRoutes } from './sandbox/http/crypto-routes.ts';
import { registerIssuingSandboxRoutes } from './sandbox/http/issuing-routes.ts';
import { registerMessagesRoutes } from './sandbox/http/messages-routes.ts';
import { registerPaymentsSandboxRoutes } from './sandbox/http/payments-routes.ts';
import { registerTriggerRoutes } from './sandbox/http/trigger-routes.ts';
import { TriggerCatalog } from './sandbox/triggers/trigger-catalog.ts';
import { TESSERA_VERSION } from './version.ts';

export type { PlatformServices } from './platform-services.ts';

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

export interface TesseraApp {
  app: FastifyInstance;
  services: PlatformServices;
  /** Drains and stops everything within the shutdown timeout (default: TESSERA_SHUTDOWN_TIMEOUT_MS) */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/** The most a stop waits for running jobs. */
const JOBS_STOP_MS = 3000;

function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      () => {
        clearTimeout(timer);
        resolve(true);
      },
    );
  });
}

export async function createApp(options: AppOptions): Promise<TesseraApp> {
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

  const outbox = new Outbox(clock, deliveries);
  const ledger = new Ledger(now);
  sweeps.register('ledger-rollup', () => ledger.rollUp(db));
  sweeps.register('console-daily-figures', () => rollUpDailyFigures(db, clock.now()));
  const approvals = new Approvals(clock, encryptor);
  sweeps.register('approval-expiry', () => approvals.expireDue(db));
  const terms = new TermsStore(clock, tenantCache, config.moneyOut.defaults);
  const payoutLifecycle = new PayoutLifecycle({ ledger, outbox, clock });
  sweeps.register('balance-days', () => sumBalanceDays(db, clock.now()));
  const payouts = new PayoutsService({
    db,
    transact,
    clock,
    ledger,
    outbox,
    terms,
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
  } = createRails({
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
  const issuing = createIssuingServices({
    config,
    db,
    clock,
    transact,
    outbox,
    ledger,
    sweeps,
    encryptor,
    encryptionKey: options.encryptionKey,
    capabilities,
    rails,
    oneStatementWrites: options.oneStatementWrites ?? true,
  });

  const crypto = createCryptoServices({
    mode: config.mode,
    publicUrl: config.publicUrl,
    db,
    clock,
    transact,
    outbox,
    ledger,
    sweeps,
    stores,
    rails,
    terms,
  });

  await processes.start();
  const payments = createPaymentsServices({
    publicUrl: config.publicUrl,
    authorizationSeconds: config.paymentsAuthorizationSeconds,
    disputeFeeMajor: config.disputeFeeMajor,
    oneStatementWrites: options.oneStatementWrites ?? true,
    db,
    clock,
    transact,
    outbox,
    ledger,
    sweeps,
    encryptor,
    capabilities,
    rails,
    terms,
  });
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

  const services: PlatformServices = {
    config,
    db,
    clock,
    capabilities,
    bankAccounts: new BankAccounts(encryptor, clock),
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
    issuing,
    crypto,
    payments,
    consoleUsers: new ConsoleUsers({ db, encryptor }),
    approvals,
  };

  const app = await buildHttp(services, options.adminToken);
  if (options.runBackgroundSweeps ?? true) sweeps.start(config.sweepIntervalMs);

  let closing: Promise<void> | undefined;
  const close = (options: { timeoutMs?: number } = {}) => {
    closing ??= (async () => {
      const deadline = Date.now() + (options.timeoutMs ?? config.shutdownTimeoutMs);
      const remaining = () => Math.max(0, deadline - Date.now());
      // Webhook attempts in flight are cut short first (a hanging receiver must not hold the stop):
      // they are recorded as abandoned and due again, for whichever process runs next.
      deliveries.stop();
      // The listener closes and requests on open connections answer 503 with `Connection: close`
      // (readiness included) while the requests in flight finish.
      const httpClosed = app.close();
      await sweeps.stop();
      // Attempts were cut short, so running jobs end quickly; a job still running at its share of the
      // deadline is left to its lease (another process retries it).
      await jobs.stop(Math.min(remaining(), JOBS_STOP_MS));
      await processes.stop();
      closeRails();
      if (!(await settlesWithin(httpClosed, remaining()))) {
        logger.warn('requests still running at the shutdown deadline were cut off');
        app.server.closeAllConnections();
        await httpClosed;
      }
      await database.close();
      // The last spans are sent, or given up at the deadline (an unreachable collector must not hold a stop).
      if (tracing) await settlesWithin(tracing.shutdown(), Math.max(1000, remaining()));
    })();
    return closing;
  };
  return { app, services, close };
}

/** The sandbox's clock and triggers, shared by the sandbox API and the console's sandbox page. */
function sandboxControls(services: PlatformServices, clock: SandboxClock) {
  const clockDeps = { db: services.db, clock, sweeps: services.sweeps, processes: services.processes };
  const triggers = new TriggerCatalog({
    db: services.db,
    events: services.events,
    clockDeps,
    issuing: { db: services.db, partners: services.partners, ...services.issuing },
    payments: {
      db: services.db,
      payments: services.payments,
      moneyOut: services.moneyOut,
      bankAccounts: services.bankAccounts,
    },
    crypto: {
      db: services.db,
      transact: services.transact,
      stores: services.stores,
      orders: services.crypto.orders,
      refunds: services.crypto.refunds,
      chain: services.railSandbox.chain,
      moneyOut: services.moneyOut,
      bankAccounts: services.bankAccounts,
    },
  });
  return { clockDeps, triggers };
}

async function buildHttp(services: PlatformServices, adminToken: string): Promise<FastifyInstance> {
  const { config, metrics } = services;
  // Filled as the APIs mount: errors raised before routing are answered in the envelope of the API
  // whose base path the URL names.
  const presenters: ScopePresenters = { scopes: [], fallback: presentAdminError };
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    logController: new OneLinePerRequest(),
    bodyLimit: 1024 * 1024,
    frameworkErrors: frameworkErrorHandler(presenters),
    clientErrorHandler: clientErrorHandler(presenters),
    // PHP-style bracket keys (`status[]=a&status[]=b`) as the payments service's clients send them.
    routerOptions: {
      querystringParser: (query: string) => qs.parse(query, { depth: 5, arrayLimit: 100 }),
      // Clients built on axios add a slash (`POST /stores/orders/`): every route answers both spellings.
      ignoreTrailingSlash: true,
    },
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.:-]{1,100}$/.test(given) ? given : newId('request');
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(formbody);
  acceptEmptyJson(app);
  addSecurityHeaders(app);
  if (config.mode === 'sandbox') addSandboxBanner(app);
  refuseLongUrls(app);
  refuseUnstorableStrings(app);
  await app.register(rateLimit, {
    global: true,
    max: config.rateLimitPerMinute,
    timeWindow: 60_000,
    keyGenerator: rateLimitKey,
    store: postgresRateLimitStore(services.db, services.logger),
    errorResponseBuilder: (_request, context) =>
      new DomainError('rate_limited', `rate limit of ${context.max} requests per minute exceeded`, {
        retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });
  addRequestSpans(app);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });
  app.setErrorHandler((err, request, reply) => presentError(presentAdminError, err, request, reply));
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (request, reply) =>
    presentError(presentAdminError, new DomainError('not_found', 'no such route'), request, reply),
  );

  const mount = (options: ApiScopeOptions) => {
    presenters.scopes.push({ prefix: options.prefix, presenter: options.presenter });
    presenters.scopes.sort((a, b) => b.prefix.length - a.prefix.length);
    return mountApi(app, options);
  };
  const documents = new Map<string, () => unknown>();
  const onDocument = (name: string, getDocument: () => unknown) => documents.set(name, getDocument);
  const common = { idempotency: services.idempotency, onDocument };
  await mount({
    ...issuingApi(config.basePaths.issuing, {
      db: services.db,
      partners: services.partners,
      tenantCache: services.tenantCache,
      ...services.issuing,
      events: services.events,
    }),
    ...common,
  });
  await mount({
    ...paymentsApi(config.basePaths.payments, {
      ...services.payments,
      db: services.db,
      events: services.events,
      merchants: services.merchants,
      tenantCache: services.tenantCache,
      bankAccounts: services.bankAccounts,
      ledger: services.ledger,
      clock: services.clock,
      moneyOut: services.moneyOut,
    }),
    ...common,
  });
  const checkWebhookUrl = (url: string | null | undefined, field: string) => {
    if (url === undefined || url === null || url === '') return null;
    const problem = services.ssrf.checkUrl(url);
    if (problem) throw new DomainError('validation_failed', `${field} ${problem}`, { field });
    return url;
  };
  await mount({
    ...cryptoApi(config.basePaths.crypto, {
      ...services.crypto,
      events: services.events,
      tenantCache: services.tenantCache,
      checkCallbackUrl: checkWebhookUrl,
      bankAccounts: services.bankAccounts,
      db: services.db,
      ledger: services.ledger,
      clock: services.clock,
      moneyOut: services.moneyOut,
    }),
    ...common,
  });

  const adminDeps = {
    db: services.db,
    partners: services.partners,
    merchants: services.merchants,
    stores: services.stores,
    events: services.events,
    cards: services.issuing.cards,
    bankAccounts: services.bankAccounts,
    approvals: services.approvals,
    moneyOut: services.moneyOut,
    ledger: services.ledger,
    clock: services.clock,
    checkWebhookUrl,
  };
  await mount({
    ...common,
    name: 'admin',
    prefix: '/admin',
    title: 'Tessera admin API',
    version: '1.0.0',
    description: 'The operator onboards partners, merchants and stores, and inspects and redelivers events.',
    presenter: presentAdminError,
    securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } },
    security: [{ adminToken: [] }],
    // Every admin write is the operator's action: recorded in the audit trail with it.
    auditWrites: (routes) =>
      addAuditHooks(routes, {
        db: services.db,
        clock: services.clock,
        actorOf: () => ({ actorKind: 'admin_token', actor: 'admin token', tenant: null }),
      }),
    routes: async (routes) => {
      requireAdmin(routes, adminToken);
      await registerPartnerRoutes(routes, adminDeps);
      await registerMerchantRoutes(routes, adminDeps);
      await registerStoreRoutes(routes, adminDeps);
      await registerAdminBankAccountRoutes(routes, adminDeps);
      await registerApprovalThresholdRoutes(routes, adminDeps);
      await registerMoneyOutRoutes(routes, adminDeps);
      await registerEventRoutes(routes, adminDeps);
      await registerIssuingCardRoutes(routes, adminDeps.cards);
      await registerConsoleUserRoutes(routes, services.consoleUsers);
      await registerAuditRoutes(routes, adminDeps);
    },
  });
  const sandbox =
    config.mode === 'sandbox' && services.clock instanceof SandboxClock
      ? sandboxControls(services, services.clock)
      : undefined;
  if (sandbox) {
    await mount({
      ...common,
      name: 'sandbox',
      prefix: '/sandbox',
      title: 'Tessera sandbox API',
      version: '1.0.0',
      description:
        'Drives the simulated world: the clock and, per API, the simulated rails. Sandbox mode only.',
      presenter: presentAdminError,
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } },
      security: [{ adminToken: [] }],
      routes: async (routes) => {
        requireAdmin(routes, adminToken);
        await registerClockRoutes(routes, sandbox.clockDeps);
        await registerTriggerRoutes(routes, sandbox.triggers);
        await registerMessagesRoutes(routes, { db: services.db, inbox: services.railSandbox.inbox });
        await registerIssuingSandboxRoutes(routes, {
          ...services.issuing,
          transact: services.transact,
          chain: services.railSandbox.chain,
        });
        await registerPaymentsSandboxRoutes(routes, {
          payments: services.payments,
          network: services.railSandbox.cardNetwork,
          walletTokens: services.railSandbox.walletTokens,
        });
        await registerBankSandboxRoutes(routes, {
          transact: services.transact,
          lifecycle: services.moneyOut.lifecycle,
          bank: services.moneyOut.bank,
        });
        await registerCryptoSandboxRoutes(routes, {
          db: services.db,
          transact: services.transact,
          orders: services.crypto.orders,
          refunds: services.crypto.refunds,
          chain: services.railSandbox.chain,
          fx: services.railSandbox.fx,
        });
      },
    });
  }
  await registerKycPageRoutes(app, { db: services.db, vendor: services.railSandbox.kycVendor });
  await registerPayPageRoutes(app, {
    orders: services.crypto.orders,
    clock: services.clock,
    capabilities: services.capabilities,
    deliverBeforeAnswer: (eventId, waitMs) => services.deliveries.deliverBeforeAnswer(eventId, waitMs),
  });
  await registerRefundPageRoutes(app, { refunds: services.crypto.refunds });
  await registerAcsPageRoutes(app, { network: services.railSandbox.cardNetwork });
  await registerTopupPageRoutes(app, {
    topups: services.issuing.topups,
    cardTopups: services.issuing.cardTopups,
  });
  const frameAncestorsOf = (siteId: number) => services.merchants.frameAncestors(services.db, siteId);
  const hostedCheckout = new HostedCheckout({
    db: services.db,
    createUnit: services.createUnit,
    clock: services.clock,
    merchants: services.merchants,
    payments: services.payments,
  });
  await registerCheckoutPageRoutes(app, {
    payments: services.payments,
    publicUrl: config.publicUrl,
    frameAncestorsOf,
    hostedCheckout,
    brandOf: (siteId) => services.merchants.brandOf(services.db, siteId),
  });
  await registerHostedCheckoutRoutes(app, {
    checkout: hostedCheckout,
    sessions: services.payments.checkoutSessions,
    merchants: services.merchants,
    frameAncestorsOf,
  });
  await registerConsole(app, {
    services,
    users: services.consoleUsers,
    adminToken,
    ...(sandbox ? { sandbox } : {}),
  });
  await registerOperationalRoutes(asZod(app), {
    db: services.db,
    rails: services.railReadiness,
    metrics,
    documents,
  });
  registerPageAssets(app);
  await registerGuideRoutes(app);
  await registerLandingPageRoutes(app, {
    version: TESSERA_VERSION,
    mode: config.mode,
    publicUrl: config.publicUrl,
    clock: services.clock,
    apis: [
      {
        name: 'issuing',
        title: 'Card issuing',
        basePath: config.basePaths.issuing,
        credential: 'partner API key, then a customer’s access token',
      },
      {
        name: 'payments',
        title: 'Card payments',
        basePath: config.basePaths.payments,
        credential: 'merchant API key or a site’s sk_ key',
      },
      {
        name: 'crypto',
        title: 'Crypto payments',
        basePath: config.basePaths.crypto,
        credential: 'store API key (u_test_…)',
      },
      { name: 'admin', title: 'Operator (admin)', basePath: '/admin', credential: 'admin token' },
      ...(config.mode === 'sandbox'
        ? [{ name: 'sandbox', title: 'Sandbox controls', basePath: '/sandbox', credential: 'admin token' }]
        : []),
    ],
  });
  await app.ready();
  return app;
}
