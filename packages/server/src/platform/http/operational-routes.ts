// Routes for operators and their tooling: liveness, readiness, Prometheus metrics and the docs index.
import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../db/database.ts';
import type { ZodApp } from './api-scope.ts';
import type { Metrics } from './metrics.ts';

export interface OperationalDeps {
  db: Db;
  /** Real rails' own checks (an EVM node down or on the wrong chain): a reason makes the process unready */
  rails: (() => Promise<string | undefined>)[];
  metrics: Metrics;
  /** OpenAPI document getters by API name */
  documents: Map<string, () => unknown>;
}

export async function registerOperationalRoutes(app: ZodApp, deps: OperationalDeps): Promise<void> {
  const quiet = { config: { rateLimit: false }, logLevel: 'warn' as const };

  app.get('/healthz', { ...quiet, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { ...quiet, schema: { hide: true } }, async (_request, reply) => {
    try {
      await sql`SELECT 1`.execute(deps.db);
    } catch {
      return reply.code(503).send({ status: 'unavailable', reason: 'database unreachable' });
    }
    const reasons = (
      await Promise.all(deps.rails.map((check) => check().catch((err: Error) => err.message)))
    ).filter((reason): reason is string => reason !== undefined);
    if (reasons.length > 0)
      return reply.code(503).send({ status: 'unavailable', reason: reasons.join('; ') });
    return { status: 'ready' };
  });

  app.get('/metrics', { ...quiet, schema: { hide: true } }, async (_request, reply) =>
    reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics()),
  );

  app.get(
    '/docs/:api/openapi.json',
    { schema: { hide: true, params: z.object({ api: z.string() }) } },
    async (request, reply) => {
      const document = deps.documents.get(request.params.api);
      if (!document)
        return reply.code(404).send({ error: { code: 'not_found', message: 'no such API document' } });
      return reply.type('application/json').send(JSON.stringify(document()));
    },
  );
}
