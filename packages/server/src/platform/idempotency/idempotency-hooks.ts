// Idempotency-Key handling for every mutating route of a scope (docs/architecture.md, Idempotency keys). Runs after the
// scope's auth, so keys are namespaced by the caller. A keyed request runs as one unit of work (lazy: it
// costs no round trip until it writes, and a one-statement write carries the key's row; on an
// 'optimistic' route even one its statement may refuse, the request then running again): same key and
// request again → the stored answer with `Idempotency-Replayed: true`; same key, other request → 422
// naming the key; while the first still runs → 409. A 5xx answer rolls the whole request back and
// stores nothing, so the retry runs afresh; any other answer commits with the request's effect.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { UnitOfWork } from '../db/connection-scope.ts';
import { DeferredWriteRefused } from '../db/unit-of-work.ts';
import { DomainError } from '../errors/domain-error.ts';
import { asDomainError } from '../http/as-domain-error.ts';
import {
  hashRequest,
  type IdempotencyClaim,
  type IdempotencyStore,
  KeyAlreadyUsed,
  keyDigest,
  type UsedKey,
} from './idempotency-store.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const IDEMPOTENCY_HEADER = 'idempotency-key';

interface KeyedRequest {
  claim: IdempotencyClaim;
  unit: UnitOfWork;
  /** The route's handler, to run the request again when its deferred write was refused at commit */
  runHandler: () => Promise<unknown>;
}
const keyed = new WeakMap<FastifyRequest, KeyedRequest>();
/** Writes without a key that still run as one unit of work (`everyWriteIsAUnit`) */
const plain = new WeakMap<FastifyRequest, UnitOfWork>();

/** The unit of work the request runs in, while it is open (what must commit with its effect joins it). */
export function activeUnit(request: FastifyRequest): UnitOfWork | undefined {
  const unit = keyed.get(request)?.unit ?? plain.get(request);
  return unit?.isActive ? unit : undefined;
}

/** Renders an error in the scope's envelope, for answers decided after the handler (in onSend). */
declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * 'refuse': the route takes no Idempotency-Key (400), e.g. one that moves the sandbox clock.
     * 'optimistic': with a key, a write that its own statement may refuse still waits to be sent with
     * the key's answer; refused there, the route runs again (so it returns its answer, never sends it).
     */
    idempotency?: 'refuse' | 'optimistic';
    /**
     * The answer holds only what the route's rows keep in clear (an id, a URL made of it): stored with
     * its key unencrypted. Only where a test proves it (test/platform/answers-in-clear.test.ts).
     */
    answerInClear?: true;
  }
}

export type KeyErrorPresenter = (error: DomainError, requestId: string) => { status: number; body: unknown };

export function addIdempotencyHooks(
  app: FastifyInstance,
  store: IdempotencyStore,
  present?: KeyErrorPresenter,
  /** A write without a key runs as one unit of work too (its audit record commits with it) */
  options: { everyWriteIsAUnit?: boolean } = {},
): void {
  // In onSend the scope's error handler no longer runs: its envelope is rendered here.
  const answerError = (request: FastifyRequest, reply: FastifyReply, error: DomainError) => {
    if (!present) throw error;
    const rendered = present(error, request.id);
    reply.code(rendered.status).header('content-type', 'application/json; charset=utf-8');
    if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
    return JSON.stringify(rendered.body);
  };

  /** Commits a keyed request with its answer (or answers what the key decided meanwhile). */
  const commitKeyed = async (
    request: FastifyRequest,
    reply: FastifyReply,
    pending: KeyedRequest,
    body: string,
    payload: unknown,
  ): Promise<unknown> => {
    let used: UsedKey | undefined;
    try {
      used = await store.commit(pending.unit, pending.claim, {
        status: reply.statusCode,
        contentType: String(reply.getHeader('content-type') ?? 'application/json'),
        body,
      });
    } catch (err) {
      await pending.unit.finish('rollback');
      if (err instanceof DeferredWriteRefused) return runAgain(request, reply, pending);
      // The database gone (a restart, a failover) is a 503 with Retry-After, as anywhere else.
      const unavailable = asDomainError(err);
      if (unavailable.code === 'database_unavailable') {
        request.log.warn({ reason: (err as Error).message }, 'database unavailable');
        return answerError(request, reply, unavailable);
      }
      request.log.error({ err }, 'a keyed request could not be committed');
      return answerError(
        request,
        reply,
        new DomainError('internal', 'the request could not be committed; retry it with the same key', {
          cause: err,
        }),
      );
    }
    return used ? usedKeyBody(request, reply, pending.claim, used) : payload;
  };

  /** The body (in onSend) of a key used meanwhile: its stored answer replayed, or the error it decides. */
  const usedKeyBody = (
    request: FastifyRequest,
    reply: FastifyReply,
    claim: IdempotencyClaim,
    used: UsedKey,
  ) => {
    if (used.outcome !== 'replay') return answerError(request, reply, usedKeyError(claim, used));
    reply.code(used.status).header('content-type', used.contentType).header('idempotency-replayed', 'true');
    return used.body;
  };

  // The write kept for the commit was refused there (a ledger bound, a status changed since it was read):
  // the answer made before it ran does not hold, and nothing was committed. The request runs again in a
  // unit that sends such a write when it is made, so the route meets the refusal where it handles it (a
  // decline recorded, say), and that answer is stored with the key.
  const runAgain = async (request: FastifyRequest, reply: FastifyReply, first: KeyedRequest) => {
    const pending = { ...first, unit: store.open(first.claim, { defersRefusable: false }) };
    keyed.set(request, pending);
    let body: string;
    try {
      const answer = await pending.unit.run(pending.runHandler);
      // Its answer is serialized here: a handler that sent it itself cannot be run again.
      if (answer === reply)
        throw new Error('a route whose write may be refused at commit returns its answer');
      body = String(reply.serialize(answer));
    } catch (err) {
      if (err instanceof KeyAlreadyUsed) {
        await pending.unit.finish('rollback');
        return usedKeyBody(request, reply, pending.claim, err.decision);
      }
      const error = asDomainError(err);
      if (error.code === 'internal') request.log.error({ err }, 'a keyed request failed when run again');
      body = answerError(request, reply, error);
    }
    if (reply.statusCode >= 500) {
      await pending.unit.finish('rollback');
      return body;
    }
    return commitKeyed(request, reply, pending, body, body);
  };

  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (!methods.some((method) => MUTATING.has(method))) return;
    const handler = route.handler as RouteHandlerMethod;
    const idempotency = (route.config as { idempotency?: string } | undefined)?.idempotency;
    const answerInClear = (route.config as { answerInClear?: true } | undefined)?.answerInClear === true;
    if (answerInClear) for (const method of methods) store.answersInClear.add(`${method} ${route.url}`);
    if (idempotency === 'refuse') {
      route.handler = async function unkeyedHandler(request, reply) {
        if (request.headers[IDEMPOTENCY_HEADER] !== undefined) {
          throw keyError(
            'validation_failed',
            'this request cannot be replayed: send it without an Idempotency-Key',
          );
        }
        return handler.call(this, request, reply);
      };
      return;
    }
    route.handler = async function keyedHandler(request, reply) {
      const key = request.headers[IDEMPOTENCY_HEADER];
      if (key === undefined && options.everyWriteIsAUnit && MUTATING.has(request.method)) {
        const unit = store.openPlain();
        plain.set(request, unit);
        return unit.run(async () => handler.call(this, request, reply));
      }
      if (key === undefined || !MUTATING.has(request.method)) return handler.call(this, request, reply);
      const scope = request.principal?.scope ?? `anonymous:${request.ip}`;
      const checked = checkKey(key);
      const claim = {
        scope,
        key: checked,
        ...keyDigest({ scope, key: checked }),
        requestHash: hashRequest(request.method, request.url, request.body),
        ...(answerInClear ? { answerInClear } : {}),
      };
      const runHandler = async () => handler.call(this, request, reply);
      const run = async (defersRefusable: boolean) => {
        const unit = store.open(claim, { defersRefusable });
        keyed.set(request, { claim, unit, runHandler });
        try {
          return await unit.run(runHandler);
        } catch (err) {
          if (err instanceof KeyAlreadyUsed || err instanceof DeferredWriteRefused)
            await unit.finish('rollback');
          if (!(err instanceof KeyAlreadyUsed)) throw err;
          return answerUsedKey(reply, claim, err.decision);
        }
      };
      try {
        return await run(idempotency === 'optimistic');
      } catch (err) {
        // A deferred write refused when a later statement of the request sent it: run it again at once.
        if (!(err instanceof DeferredWriteRefused)) throw err;
        return await run(false);
      }
    };
  });

  // The answer is final here, before a byte of it is sent: record it and commit with the effect. A
  // failed commit turns into an error answer (the error handler runs), and nothing was stored. A key
  // whose row committed first (a duplicate that raced this one) answers what that row says instead.
  app.addHook('onSend', async (request, reply, payload) => {
    const unkeyed = plain.get(request);
    if (unkeyed?.isActive) {
      try {
        await unkeyed.finish(reply.statusCode >= 500 ? 'rollback' : 'commit');
      } catch (err) {
        await unkeyed.finish('rollback');
        const error = asDomainError(err);
        if (error.code !== 'database_unavailable')
          request.log.error({ err }, 'a request could not be committed');
        return answerError(
          request,
          reply,
          error.code === 'database_unavailable'
            ? error
            : new DomainError('internal', 'the request could not be committed; nothing was changed', {
                cause: err,
              }),
        );
      }
      return payload;
    }
    const pending = keyed.get(request);
    if (!pending?.unit.isActive) return payload;
    // An empty answer (a redirect, a 204) is an answer: it is stored and the effect commits. Only a body
    // that cannot be stored (a stream) rolls the request back.
    const body =
      payload === undefined || payload === null
        ? ''
        : typeof payload === 'string'
          ? payload
          : Buffer.isBuffer(payload)
            ? payload.toString('utf8')
            : undefined;
    if (reply.statusCode >= 500 || body === undefined) {
      await pending.unit.finish('rollback');
      return payload;
    }
    return commitKeyed(request, reply, pending, body, payload);
  });

  // A request that ended without passing onSend (an error in a later hook, a destroyed socket) ends its
  // unit too: nothing of it commits, and its connection goes back to the pool.
  app.addHook('onResponse', async (request) => {
    await plain.get(request)?.finish('rollback');
    await keyed.get(request)?.unit.finish('rollback');
  });
}

function answerUsedKey(reply: FastifyReply, claim: IdempotencyClaim, used: UsedKey) {
  if (used.outcome !== 'replay') throw usedKeyError(claim, used);
  return reply
    .code(used.status)
    .header('content-type', used.contentType)
    .header('idempotency-replayed', 'true')
    .send(used.body);
}

function usedKeyError(claim: IdempotencyClaim, used: Exclude<UsedKey, { outcome: 'replay' }>): DomainError {
  switch (used.outcome) {
    case 'mismatch':
      return keyError(
        'idempotency_mismatch',
        `Idempotency-Key "${claim.key}" was already used for a different request`,
      );
    case 'in_progress':
      return keyError(
        'idempotency_in_progress',
        `a request with Idempotency-Key "${claim.key}" is still in progress`,
      );
    case 'expired':
      return keyError(
        'idempotency_key_expired',
        `Idempotency-Key "${claim.key}" already ran this request at ${used.usedAt.toISOString()} ` +
          `(answered ${used.status}); that answer is no longer kept and the request does not run twice: ` +
          'look the result up, or send a new key to run it again',
      );
  }
}

function checkKey(key: string | string[]): string {
  if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
    throw keyError('validation_failed', 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  }
  return key;
}

const keyError = (
  code: 'validation_failed' | 'idempotency_mismatch' | 'idempotency_in_progress' | 'idempotency_key_expired',
  message: string,
) => new DomainError(code, message, { field: 'Idempotency-Key' });
