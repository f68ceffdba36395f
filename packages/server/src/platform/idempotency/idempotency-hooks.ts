// Idempotency-Key handling for every mutating route of a scope (docs/architecture.md, Idempotency keys). Runs after the
// scope's auth, so keys are namespaced by the caller. A keyed request runs as one unit of work: same key
// and request again → the stored answer with `Idempotency-Replayed: true`; same key, other request →
// 422 naming the key; while the first still runs → 409. A 5xx answer rolls the whole request back and
// stores nothing, so the retry runs afresh; any other answer commits with the request's effect.
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { UnitOfWork } from '../db/connection-scope.ts';
import { DomainError } from '../errors/domain-error.ts';
import { hashRequest, type IdempotencyClaim, type IdempotencyStore } from './idempotency-store.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const IDEMPOTENCY_HEADER = 'idempotency-key';

interface KeyedRequest {
  claim: IdempotencyClaim;
  unit: UnitOfWork;
}
const keyed = new WeakMap<FastifyRequest, KeyedRequest>();

export function addIdempotencyHooks(app: FastifyInstance, store: IdempotencyStore): void {
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (!methods.some((method) => MUTATING.has(method))) return;
    const handler = route.handler as RouteHandlerMethod;
    if ((route.config as { idempotency?: string } | undefined)?.idempotency === 'refuse') {
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
      if (key === undefined || !MUTATING.has(request.method)) return handler.call(this, request, reply);
      const claim = {
        scope: request.principal?.scope ?? `anonymous:${request.ip}`,
        key: checkKey(key),
        requestHash: hashRequest(request.method, request.url, request.body),
      };
      const begun = await store.begin(claim);
      switch (begun.outcome) {
        case 'run':
          keyed.set(request, { claim, unit: begun.unit });
          return begun.unit.run(async () => handler.call(this, request, reply));
        case 'replay':
          return reply
            .code(begun.status)
            .header('content-type', begun.contentType)
            .header('idempotency-replayed', 'true')
            .send(begun.body);
        case 'mismatch':
          throw keyError(
            'idempotency_mismatch',
            `Idempotency-Key "${claim.key}" was already used for a different request`,
          );
        case 'in_progress':
          throw keyError(
            'idempotency_in_progress',
            `a request with Idempotency-Key "${claim.key}" is still in progress`,
          );
        case 'expired':
          throw keyError(
            'idempotency_key_expired',
            `Idempotency-Key "${claim.key}" already ran this request at ${begun.usedAt.toISOString()} ` +
              `(answered ${begun.status}); that answer is no longer kept and the request does not run twice: ` +
              'look the result up, or send a new key to run it again',
          );
      }
    };
  });

  // The answer is final here, before a byte of it is sent: record it and commit with the effect. A
  // failed commit turns into an error answer (the error handler runs), and nothing was stored.
  app.addHook('onSend', async (request, reply, payload) => {
    const pending = keyed.get(request);
    if (!pending?.unit.isOpen) return payload;
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
    try {
      await store.record(pending.unit, pending.claim, {
        status: reply.statusCode,
        contentType: String(reply.getHeader('content-type') ?? 'application/json'),
        body,
      });
      await pending.unit.finish('commit');
    } catch (err) {
      await pending.unit.finish('rollback');
      throw new DomainError('internal', 'the request could not be committed; retry it with the same key', {
        cause: err,
      });
    }
    return payload;
  });

  // A request that ended without passing onSend (an error in a later hook, a destroyed socket) ends its
  // unit too: nothing of it commits, and its connection goes back to the pool.
  app.addHook('onResponse', async (request) => {
    await keyed.get(request)?.unit.finish('rollback');
  });
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
