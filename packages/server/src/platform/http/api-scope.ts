// Mounts one API under its base path as an encapsulated fastify context: its own error envelope,
// not-found answer and OpenAPI document. Docs routes sit beside the API routes, outside its auth.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { jsonSchemaTransform, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { OpenAPIV3 } from 'openapi-types';
import { DomainError } from '../errors/domain-error.ts';
import { addIdempotencyHooks } from '../idempotency/idempotency-hooks.ts';
import type { IdempotencyStore } from '../idempotency/idempotency-store.ts';
import { asDomainError } from './as-domain-error.ts';
import { completeDocument, type RequestExamples } from './openapi-document.ts';
import { allowInlineStyles } from './security-headers.ts';

export type ZodApp = ReturnType<typeof asZod>;
export const asZod = (app: FastifyInstance) => app.withTypeProvider<ZodTypeProvider>();

export interface RenderedError {
  status: number;
  body: unknown;
}

/** An API's one mapping from DomainError to its wire envelope. */
export type ErrorPresenter = (error: DomainError, requestId: string) => RenderedError;

export interface ApiScopeOptions {
  name: string;
  prefix: string;
  title: string;
  version: string;
  description: string;
  presenter: ErrorPresenter;
  /** Security schemes shown in the OpenAPI document */
  securitySchemes?: Record<string, OpenAPIV3.SecuritySchemeObject>;
  /** Idempotency-Key handling for the scope's mutating routes (docs/architecture.md, Idempotency keys) */
  idempotency: IdempotencyStore;
  /** Hooks that must see a write before its unit of work commits (the audit trail); every write then runs as one unit */
  auditWrites?: (routes: FastifyInstance) => void;
  /**
   * Registers the API's routes inside the scope. Authentication belongs in onRequest hooks, so it has
   * run (and named the principal) before the idempotency preHandler claims a key.
   */
  routes: (app: ZodApp) => Promise<void>;
  /** Bodies are accepted form-encoded as well as JSON (the document lists both) */
  formBodies?: boolean;
  /** The media type of the API's successful answers, when not application/json */
  successMediaType?: string;
  /** Hand-written request examples (openapi-document.ts) */
  requestExamples?: RequestExamples;
  /** The document's default security requirement (alternatives), e.g. `[{apiKey: []}]` */
  security?: Record<string, string[]>[];
  /** Collects the scope's OpenAPI document getter for /docs */
  onDocument?: (name: string, getDocument: () => unknown) => void;
}

/** Tessera's icon: a white T on the console's blue, for the references' tabs. */
const TESSERA_ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f3a5f"/><path d="M8 8h16v4.5h-5.75V25h-4.5V12.5H8z" fill="#fff"/></svg>';

export async function mountApi(app: FastifyInstance, options: ApiScopeOptions): Promise<void> {
  await app.register(
    async (scope) => {
      await scope.register(swagger, {
        openapi: {
          openapi: '3.1.0',
          info: {
            title: options.title,
            version: options.version,
            description: `${options.description}\n\nThis document: \`/docs/${options.name}/openapi.json\`.`,
            license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
          },
          servers: [{ url: options.prefix }],
          components: { securitySchemes: options.securitySchemes ?? {} },
          // What every operation needs unless it says otherwise (an operation's own `security` wins).
          ...(options.security ? { security: options.security } : {}),
        },
        transform: jsonSchemaTransform,
        transformObject: (documents) =>
          completeDocument(
            ('openapiObject' in documents
              ? documents.openapiObject
              : documents.swaggerObject) as OpenAPIV3.Document,
            {
              formBodies: options.formBodies ?? false,
              successMediaType: options.successMediaType,
              requestExamples: options.requestExamples,
            },
          ),
      });
      scope.setErrorHandler((err, request, reply) => presentError(options.presenter, err, request, reply));
      // Unknown routes count against the caller's rate limit too (probing for routes is not free).
      scope.setNotFoundHandler({ preHandler: scope.rateLimit() }, (request, reply) =>
        presentError(options.presenter, new DomainError('not_found', 'no such route'), request, reply),
      );
      // The reference is Tessera's: the API's own title and icon, and no top bar, whose framework logo and
      // "Explore" box showed the UI's internal address of the document rather than the one to use
      // (/docs/{name}/openapi.json, which the document's description gives).
      await scope.register(swaggerUi, {
        routePrefix: '/docs',
        uiConfig: { docExpansion: 'list', layout: 'BaseLayout' },
        theme: {
          title: `${options.title} — reference`,
          favicon: [
            {
              filename: 'favicon.svg',
              rel: 'icon',
              type: 'image/svg+xml',
              sizes: 'any',
              content: TESSERA_ICON,
            },
          ],
        },
      });
      // The reference loads its assets relative to `/docs/`: the bare `/docs` (which trailing-slash
      // matching also routes to it) is sent there, or the page would look for them one level up.
      const bareDocs = `${options.prefix}/docs`;
      scope.addHook('onRequest', async (request, reply) => {
        const path = request.url.split('?')[0] ?? '';
        if (path === bareDocs) return reply.redirect(`${bareDocs}/`, 301);
        if (path.startsWith(`${bareDocs}/`)) allowInlineStyles(reply);
      });
      await scope.register(async (routes) => {
        // A route that refuses an Idempotency-Key says so in its operation (openapi-document.ts).
        routes.addHook('onRoute', (route) => {
          if (
            (route.config as { idempotency?: string } | undefined)?.idempotency === 'refuse' &&
            route.schema
          ) {
            (route.schema as Record<string, unknown>)['x-idempotency'] = 'refuse';
          }
        });
        options.auditWrites?.(routes);
        addIdempotencyHooks(routes, options.idempotency, options.presenter, {
          everyWriteIsAUnit: options.auditWrites !== undefined,
        });
        await options.routes(asZod(routes));
      });
      scope.addHook('onReady', async () => {
        options.onDocument?.(options.name, () => scope.swagger());
      });
    },
    { prefix: options.prefix },
  );
}

export function presentError(
  presenter: ErrorPresenter,
  err: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const error = asDomainError(err);
  if (error.code === 'database_unavailable') {
    // Expected during a restart or failover: one line per request, not a stack.
    request.log.warn({ reason: (error.cause as Error | undefined)?.message }, 'database unavailable');
  } else if (error.status >= 500) request.log.error({ err: error.cause ?? err }, 'request failed');
  const rendered = presenter(error, request.id);
  // Also for errors raised before the hook that sets it ran (a URL too long, a URL that does not decode).
  reply.header('x-request-id', request.id);
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
  return reply
    .code(rendered.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(rendered.body));
}
