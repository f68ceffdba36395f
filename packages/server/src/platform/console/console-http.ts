// The console's HTTP frame, under /console: the session cookie (HttpOnly, Secure, SameSite=Lax) resolved on
// every request, sign-in required everywhere but the sign-in pages and assets, every POST checked for the
// session's CSRF token and a same-origin browser, an action's idempotency key (a hidden form field) handed
// to the same idempotency machinery as the APIs, and errors answered as console pages.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Actor, addAuditHooks } from '../audit/audit-hooks.ts';
import type { Clock } from '../clock/clock.ts';
import { tokensEqual } from '../crypto/hashing.ts';
import type { Db } from '../db/database.ts';
import { DomainError } from '../errors/domain-error.ts';
import { asDomainError } from '../http/as-domain-error.ts';
import { addIdempotencyHooks, IDEMPOTENCY_HEADER } from '../idempotency/idempotency-hooks.ts';
import type { IdempotencyStore } from '../idempotency/idempotency-store.ts';
import { sendPage } from '../pages/html.ts';
import { sameOrigin } from '../pages/same-origin.ts';
import { consolePage, notice, type PageContext, type PageTitle, plainConsolePage } from './console-layout.ts';
import type { ConsoleUsers, Session } from './console-users.ts';
import { type Html, h } from './html-template.ts';
import { allows, permissionOf } from './permissions.ts';

export const SESSION_COOKIE = 'tessera_console';
export const SIGN_IN_COOKIE = 'tessera_console_sign_in';

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession?: Session & { token: string };
  }
  interface FastifyContextConfig {
    /** A console page anyone may open (sign-in, assets), or one a half-signed-in session may (second factor) */
    console?: 'public' | 'second_factor';
  }
}

export interface ConsoleFrame {
  users: ConsoleUsers;
  sandbox: boolean;
}

/** The page context of a signed-in request. */
export function contextOf(request: FastifyRequest, frame: ConsoleFrame): PageContext {
  const session = request.consoleSession;
  if (!session) throw new DomainError('unauthenticated', 'sign in first');
  return { viewer: session.viewer, csrfToken: session.csrfToken, sandbox: frame.sandbox };
}

/** Answers a signed-in console page. */
export function sendConsolePage(
  request: FastifyRequest,
  reply: FastifyReply,
  frame: ConsoleFrame,
  title: PageTitle,
  content: Html,
  status = 200,
): FastifyReply {
  const path = request.url.split('?')[0] ?? '';
  // The search box keeps what was searched for, so a miss can be corrected rather than retyped.
  const searched = path === '/console/search' ? (request.query as { q?: unknown }).q : undefined;
  const ctx = { ...contextOf(request, frame), searchQuery: typeof searched === 'string' ? searched : '' };
  return sendPage(reply.code(status), consolePage(ctx, title, content, path));
}

/**
 * The console's cookies: HttpOnly, SameSite=Lax, and Secure — except over plain http to this machine's
 * loopback (the sandbox on a laptop), where a browser would drop a Secure cookie set by http://127.0.0.1.
 * Anywhere else the console must be served over https, or its cookies never come back.
 */
export function cookieOptions(request: FastifyRequest, maxAgeSeconds: number) {
  const loopback = /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(request.host);
  const secure = request.protocol === 'https' || !loopback;
  return { path: '/console', httpOnly: true, secure, sameSite: 'lax' as const, maxAge: maxAgeSeconds };
}

export function csrfRefused(): DomainError {
  return new DomainError(
    'forbidden',
    'This form was refused: it came from another site or an old page. Go back, reload the page and try again.',
  );
}

/** A form's fields; an upload's (multipart) fields read as their values, as a plain form's are. */
const bodyOf = (request: FastifyRequest): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries((request.body ?? {}) as Record<string, unknown>).map(([name, value]) => {
      const part = value as { type?: unknown; value?: unknown } | null;
      return [name, part && typeof part === 'object' && part.type === 'field' ? part.value : value];
    }),
  );

export async function registerConsoleFrame(
  app: FastifyInstance,
  frame: ConsoleFrame,
  idempotency: IdempotencyStore,
  audit: { db: Db; clock: Clock },
  routes: (scope: FastifyInstance) => Promise<void>,
): Promise<void> {
  await app.register(cookie);
  await app.register(
    async (scope) => {
      // Every page and action declares what it needs (permissions.ts): one that does not stops the start.
      scope.addHook('onRoute', (route) => {
        if (route.config?.console) return;
        for (const method of [route.method].flat()) {
          if (method !== 'HEAD' && !permissionOf(method, route.url)) {
            throw new Error(`console route ${method} ${route.url} declares no permission (permissions.ts)`);
          }
        }
      });
      // Every action and sign-in is recorded in the audit trail, in the action's own unit of work.
      addAuditHooks(scope, {
        ...audit,
        actorOf: (request) => consoleActor(audit.db, request),
      });
      addIdempotencyHooks(scope, idempotency, undefined, { everyWriteIsAUnit: true });
      // Console addresses carry no secret, and a browser sends `Origin: null` on a form posted from a
      // no-referrer page: the console's pages tell their own origin to themselves (same-origin).
      scope.addHook('onSend', async (_request, reply, payload) => {
        reply.header('referrer-policy', 'same-origin');
        return payload;
      });
      scope.addHook('onRequest', async (request, reply) => {
        const access = request.routeOptions.config.console;
        if (access === 'public') return;
        const token = request.cookies[SESSION_COOKIE];
        const session = token ? await frame.users.session(token) : undefined;
        const allowed = session && (session.stage === 'active' || access === 'second_factor');
        if (!session || !token || !allowed) {
          const next = request.method === 'GET' ? `?next=${encodeURIComponent(request.url)}` : '';
          return reply.redirect(`/console/sign-in${next}`, 303);
        }
        request.consoleSession = { ...session, token };
        const who = session.viewer.userId ?? 'admin-token';
        request.principal = { kind: 'console', id: who, scope: `console:${who}` };
      });
      // A role that lacks what the page or action needs is refused (403) before anything runs.
      scope.addHook('preHandler', async (request) => {
        const session = request.consoleSession;
        if (!session || request.routeOptions.config.console) return;
        const needed = permissionOf(request.method, request.routeOptions.url ?? '');
        if (!needed || !allows(session.viewer.access, needed)) {
          throw new DomainError(
            'forbidden',
            `Your role (${session.viewer.access}) cannot see this page or do this: it needs the ${needed ?? 'operator'} permission. Ask an admin of your team.`,
          );
        }
      });
      scope.addHook('preHandler', async (request) => {
        if (request.method !== 'POST' || !request.consoleSession) return;
        const given = bodyOf(request).csrf;
        if (
          typeof given !== 'string' ||
          !tokensEqual(given, request.consoleSession.csrfToken) ||
          !sameOrigin(request)
        ) {
          throw csrfRefused();
        }
        // A form cannot send headers: its key travels as a field and is handed to the idempotency handler.
        const key = bodyOf(request).idempotencyKey;
        if (typeof key === 'string' && key.length > 0) request.headers[IDEMPOTENCY_HEADER] = key;
      });
      scope.setErrorHandler((err, request, reply) => {
        const error = asDomainError(err);
        if (error.status >= 500) request.log.error({ err: error.cause ?? err }, 'console request failed');
        return sendError(request, reply, frame, error);
      });
      scope.setNotFoundHandler((request, reply) =>
        sendError(request, reply, frame, new DomainError('not_found', 'page not found')),
      );
      registerAssets(scope);
      await routes(scope);
    },
    { prefix: '/console' },
  );
}

/**
 * Who acted: the signed-in person; for a sign-in, the email typed — in the tenant of the person it names,
 * so a tenant's admin sees their people's sign-ins, and the attempts on their accounts.
 */
async function consoleActor(db: Db, request: FastifyRequest): Promise<Actor | undefined> {
  const viewer = request.consoleSession?.viewer;
  if (viewer) {
    return {
      actorKind: viewer.userId ? 'console_user' : 'admin_token',
      actor: viewer.userId ? viewer.email : 'admin token',
      tenant: viewer.role === 'member' ? viewer.tenant : null,
    };
  }
  const body = bodyOf(request);
  if (typeof body.email === 'string') {
    const email = body.email.trim().toLowerCase();
    // A hostile email (a NUL Postgres text cannot hold) names nobody, and is still recorded.
    const named = email.includes('\u0000')
      ? undefined
      : await db
          .selectFrom('console_users')
          .select(['tenant_kind', 'tenant_id'])
          .where('email', '=', email.slice(0, 254))
          .executeTakeFirst();
    const tenant =
      named?.tenant_kind && named.tenant_id ? { kind: named.tenant_kind, id: named.tenant_id } : null;
    return { actorKind: 'console_user', actor: email, tenant };
  }
  if (typeof body.token === 'string') return { actorKind: 'admin_token', actor: 'admin token', tenant: null };
  return undefined;
}

function sendError(request: FastifyRequest, reply: FastifyReply, frame: ConsoleFrame, error: DomainError) {
  const title =
    error.status === 404 ? 'Not found' : error.status === 403 ? 'Refused' : 'Something went wrong';
  const text =
    error.status === 404
      ? 'There is nothing here, or it is not yours to see.'
      : error.status >= 500
        ? `The request failed on our side (request ${request.id}). Try again; if it persists, tell the operator.`
        : error.message;
  const content = h`${notice(text, 'error')}<p><a href="/console">Back to the overview</a></p>`;
  reply.code(error.status);
  if (error.retryAfterSeconds) reply.header('retry-after', String(error.retryAfterSeconds));
  if (request.consoleSession?.stage === 'active')
    return sendConsolePage(request, reply, frame, title, content, error.status);
  return sendPage(reply, plainConsolePage(title, content));
}

const require = createRequire(import.meta.url);
const ASSETS: Record<string, { file: string; type: string }> = {
  'console.css': { file: new URL('./assets/console.css', import.meta.url).pathname, type: 'text/css' },
  'console.js': { file: new URL('./assets/console.js', import.meta.url).pathname, type: 'text/javascript' },
  'uplot.js': { file: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript' },
  'uplot.css': { file: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css' },
};

function registerAssets(scope: FastifyInstance): void {
  const loaded = new Map(
    Object.entries(ASSETS).map(([name, a]) => [name, { body: readFileSync(a.file, 'utf8'), type: a.type }]),
  );
  scope.get<{ Params: { name: string } }>(
    '/assets/:name',
    { config: { console: 'public' } },
    async (request, reply) => {
      const asset = loaded.get(request.params.name);
      if (!asset) throw new DomainError('not_found', 'no such asset');
      return reply
        .type(`${asset.type}; charset=utf-8`)
        .header('cache-control', 'public, max-age=3600')
        .send(asset.body);
    },
  );
}
