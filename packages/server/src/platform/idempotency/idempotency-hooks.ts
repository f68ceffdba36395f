// Adds Idempotency-Key handling to every mutating route of a scope. Runs after the scope's auth, so
// keys are namespaced by the caller. Same key + same request: the stored answer with
// `Idempotency-Replayed: true`; same key + other request: 422 naming the key; while the first is still
// running: 409. Server errors release the key so a retry runs again.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error.ts';
import { hashRequest, type IdempotencyStore } from './idempotency-store.ts';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
export const IDEMPOTENCY_HEADER = 'idempotency-key';

export function addIdempotencyHooks(app: FastifyInstance, store: IdempotencyStore): void {
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const key = request.headers[IDEMPOTENCY_HEADER];
    if (key === undefined || !MUTATING.has(request.method)) return;
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) {
      throw new DomainError(
        'validation_failed',
        'Idempotency-Key must be 1 to 255 visible ASCII characters',
        {
          field: 'Idempotency-Key',
        },
      );
    }
    const scope = request.principal?.scope ?? `anonymous:${request.ip}`;
    const claim = await store.claim(scope, key, hashRequest(request.method, request.url, request.body));
    switch (claim.outcome) {
      case 'claimed':
        request.idempotency = { scope, key, isReplay: false };
        return;
      case 'mismatch':
        throw new DomainError(
          'idempotency_mismatch',
          `Idempotency-Key "${key}" was already used for a different request`,
          {
            field: 'Idempotency-Key',
          },
        );
      case 'in_progress':
        throw new DomainError(
          'idempotency_in_progress',
          `a request with Idempotency-Key "${key}" is still in progress`,
          {
            field: 'Idempotency-Key',
          },
        );
      case 'replay':
        request.idempotency = { scope, key, isReplay: true };
        return reply
          .code(claim.status)
          .header('content-type', claim.contentType)
          .header('idempotency-replayed', 'true')
          .send(claim.body);
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const claim = request.idempotency;
    if (!claim || claim.isReplay) return payload;
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : undefined;
    if (reply.statusCode >= 500 || body === undefined) {
      await store.release(claim.scope, claim.key);
    } else {
      await store.complete(claim.scope, claim.key, {
        status: reply.statusCode,
        contentType: String(reply.getHeader('content-type') ?? 'application/json'),
        body,
      });
    }
    return payload;
  });
}
