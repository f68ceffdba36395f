// The HTTP side of the platform: one fastify instance with the edge's rules (limits, security headers,
// rate limits, request ids, metrics), each API under its base path in its own envelope, the operator's
// admin and sandbox APIs, the hosted pages, the console, the operational routes and the landing page.
import formbody from '@fastify/formbody';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import qs from 'qs';
import { adminApi } from '../admin/admin-api.ts';
import { presentAdminError } from '../admin/http/present-error.ts';
import { registerConsole } from '../pages/console/console.ts';
import { registerGuideRoutes } from '../pages/guide-routes.ts';
import { registerLandingPageRoutes } from '../pages/landing-page-routes.ts';
import { registerOnboardingPageRoutes } from '../pages/onboarding-page-routes.ts';
import { SandboxClock } from '../platform/clock/clock.ts';
import { DomainError } from '../platform/errors/domain-error.ts';
import type { BuiltModule } from '../platform/http/api-module.ts';
import { type ApiScopeOptions, asZod, mountApi, presentError } from '../platform/http/api-scope.ts';
import {
  acceptEmptyJson,
  clientErrorHandler,
  frameworkErrorHandler,
  refuseLongUrls,
  refuseUnstorableStrings,
  type ScopePresenters,
} from '../platform/http/edge.ts';
import { OneLinePerRequest } from '../platform/http/logging.ts';
import { registerOperationalRoutes } from '../platform/http/operational-routes.ts';
import { rateLimitKey } from '../platform/http/rate-limit-key.ts';
import { postgresRateLimitStore } from '../platform/http/rate-limit-store.ts';
import { addSecurityHeaders } from '../platform/http/security-headers.ts';
import { newId } from '../platform/ids.ts';
import { addRequestSpans } from '../platform/observability/request-spans.ts';
import { addSandboxBanner } from '../platform/pages/html.ts';
import { registerPageAssets } from '../platform/pages/page-assets.ts';
import type { PlatformServices } from '../platform-services.ts';
import { registerSimulatorPages } from '../rails/simulator-pages.ts';
import { sandboxApi, sandboxControls } from '../sandbox/sandbox-api.ts';
import { TESSERA_VERSION } from '../version.ts';

export async function buildHttp(
  services: PlatformServices,
  adminToken: string,
  apis: readonly BuiltModule[],
): Promise<FastifyInstance> {
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
  for (const api of apis) await mount({ ...api.api(), ...common });
  await mount({ ...adminApi(services, adminToken), ...common });
  const sandbox =
    config.mode === 'sandbox' && services.clock instanceof SandboxClock
      ? sandboxControls(services, services.clock)
      : undefined;
  if (sandbox) await mount({ ...sandboxApi(services, adminToken, sandbox), ...common });
  for (const api of apis) await api.registerPages(app);
  await registerSimulatorPages(app, services);
  await registerConsole(app, {
    services,
    apis,
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
  await registerOnboardingPageRoutes(app, {
    db: services.db,
    invitations: services.onboardingInvitations,
    profiles: services.compliance.profiles,
  });
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
