// The composition root: builds the platform, then each API's module on it, mounts everything on one HTTP
// server and returns { app, services, close }. Tests call it with overrides; the CLI calls it once per
// process. What is built where: app/build-platform.ts (the platform and the rails), each API's
// <api>-module.ts (its services, routes and hosted pages), app/build-http.ts (the HTTP server).
import type { FastifyInstance } from 'fastify';
import { buildHttp } from './app/build-http.ts';
import { type AppOptions, buildPlatform } from './app/build-platform.ts';
import { cryptoModule } from './crypto/crypto-module.ts';
import { issuingModule } from './issuing/issuing-module.ts';
import { paymentsModule } from './payments/payments-module.ts';
import { type ApiModule, type BuiltModule, built } from './platform/http/api-module.ts';
import type { Platform, PlatformServices } from './platform-services.ts';

export type { AppOptions } from './app/build-platform.ts';

export interface TesseraApp {
  app: FastifyInstance;
  services: PlatformServices;
  /** Drains and stops everything within the shutdown timeout (default: TESSERA_SHUTDOWN_TIMEOUT_MS) */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

/** The most a stop waits for running jobs. */
const JOBS_STOP_MS = 3000;

export async function createApp(options: AppOptions): Promise<TesseraApp> {
  const { platform, afterApis, database, tracing, closeRails } = await buildPlatform(options);
  const { config, logger, deliveries, sweeps, jobs, processes } = platform;
  const apis: BuiltModule[] = [];
  const install = <S>(module: ApiModule<Platform, S>): S => {
    const services = module.build(platform);
    apis.push(built(module, platform, services));
    return services;
  };
  // Each API once, in this order (their sweeps run in it, before money out's).
  const services: PlatformServices = {
    ...platform,
    issuing: install(issuingModule),
    crypto: install(cryptoModule),
    payments: install(paymentsModule),
  };
  await afterApis();

  const app = await buildHttp(services, options.adminToken, apis);
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
