// Records every write a person makes through a scope (the admin API, the console) in the audit trail, in
// the request's own unit of work: the record commits with the action, or a refused action's record with
// its refusal. Registered before the scope's idempotency hooks, so it writes before their commit. A 5xx
// answer rolls the request back with its record (it changed nothing; the log has it).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../clock/clock.ts';
import type { Db } from '../db/database.ts';
import { activeUnit } from '../idempotency/idempotency-hooks.ts';
import { KeyAlreadyUsed } from '../idempotency/idempotency-store.ts';
import { AUDIT_ACTIONS, auditObjectOf } from './audit-actions.ts';
import { changesIn } from './audit-changes.ts';
import { type AuditEntry, appendAudit } from './audit-trail.ts';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Never recorded: credentials, codes and the forms' own tokens */
const SECRET = /pass|token|secret|csrf|^code$|totp|cvv|cvc|cardnumber|^pin$|privatekey|idempotencykey/i;
/** Recorded by their last four characters only */
const MASKED = /iban|accountnumber/i;

export interface Actor {
  actorKind: string;
  actor: string;
  tenant: { kind: string; id: string } | null;
}

export function addAuditHooks(
  scope: FastifyInstance,
  deps: {
    db: Db;
    clock: Clock;
    /** Who made the request (undefined: not a person's request, nothing recorded) */
    actorOf: (request: FastifyRequest) => Actor | undefined | Promise<Actor | undefined>;
  },
): void {
  // Every write names its action and object from one table: a route without its row stops the start.
  scope.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (WRITES.has(method) && !AUDIT_ACTIONS[`${method} ${route.url}`]) {
        throw new Error(
          `${method} ${route.url} is audited but has no row in platform/audit/audit-actions.ts`,
        );
      }
    }
  });
  scope.addHook('onSend', async (request, reply, payload) => {
    if (!WRITES.has(request.method) || reply.statusCode >= 500) return payload;
    const actor = await deps.actorOf(request);
    if (!actor) return payload;
    const route = `${request.method} ${request.routeOptions.url ?? request.url}`;
    const row = AUDIT_ACTIONS[route];
    const location = reply.getHeader('location');
    const objectId = row
      ? auditObjectOf(row.object, request, {
          payload,
          location: typeof location === 'string' ? location : undefined,
        })
      : undefined;
    const entry: AuditEntry = {
      at: deps.clock.now(),
      ...actor,
      actor: storable(actor.actor),
      source: request.ip,
      action: row?.action ?? route,
      objectId: objectId === undefined ? null : storable(objectId),
      detail: { ...detailOf(request.body), route },
      outcome: reply.statusCode < 400 ? 'succeeded' : 'refused',
      status: reply.statusCode,
      requestId: request.id,
    };
    const unit = activeUnit(request);
    // What the action changed, as the services noted it (a refusal changed nothing).
    const changes = unit && reply.statusCode < 400 ? changesIn(unit) : [];
    if (changes.length > 0) entry.detail = { ...entry.detail, changes };
    try {
      if (unit) await unit.run(() => appendAudit(deps.db, entry));
      else await deps.db.transaction().execute((tx) => appendAudit(tx, entry));
    } catch (err) {
      // The record was the unit's first write, and its key turned out to be used: this is a replay of an
      // action already recorded, answered by the idempotency hooks next.
      if (!(err instanceof KeyAlreadyUsed)) throw err;
    }
    return payload;
  });
}

/** The request's fields as recorded: secrets left out, account numbers masked, uploads named only. */
export function detailOf(body: unknown, depth = 0): Record<string, unknown> {
  if (!body || typeof body !== 'object' || Array.isArray(body) || depth > 4) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>).slice(0, 50)) {
    if (SECRET.test(key)) continue;
    const part = value as { type?: unknown; value?: unknown; filename?: unknown } | null;
    const field = storable(key);
    if (part && typeof part === 'object' && part.type === 'file')
      out[field] = `file ${storable(String(part.filename))}`;
    else if (part && typeof part === 'object' && part.type === 'field')
      out[field] = storable(String(part.value));
    else if (MASKED.test(key) && typeof value === 'string') out[field] = `…${storable(value.slice(-4))}`;
    else if (typeof value === 'string') out[field] = storable(value);
    // A body parsed at the edge may hold exact amounts (minor units)
    else if (typeof value === 'bigint') out[field] = value.toString();
    else if (value && typeof value === 'object' && !Array.isArray(value))
      out[field] = detailOf(value, depth + 1);
    else if (Array.isArray(value)) out[field] = `${value.length} items`;
    else out[field] = value;
  }
  return out;
}

/**
 * What a refused request sent is recorded too, hostile strings included: NUL (which jsonb cannot hold)
 * written as \0, a lone surrogate replaced, and a long value cut.
 */
const storable = (text: string): string => text.replaceAll('\u0000', '\\0').toWellFormed().slice(0, 500);
