// A tenant's own webhook events, in each API under that API's credentials and envelope (Tessera's
// addition to the three specs): list them (by type, object, delivery state, time; cursor pages), read
// one with every delivery attempt, send one again, and replay everything since a time or an event.
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { z } from 'zod';
import type { ZodApp } from '../http/api-scope.ts';
import {
  type eventDetailView,
  eventListQuery,
  type eventView,
  presentEvent,
  presentEventDetail,
  type replayView,
  toEventFilter,
} from './event-views.ts';
import type { EventScope, EventsService } from './events-service.ts';

type EventList = { data: z.infer<typeof eventView>[]; nextCursor: string | null };

/** How one API wraps each answer: its schema (for validation and OpenAPI) and the wrapping itself. */
interface Answer<In> {
  schema: z.ZodType;
  present(value: In, request: FastifyRequest): unknown;
}

export interface TenantEventRoutesOptions {
  /** Where the routes live in the API: `/events`, or `/stores/events` in the crypto API */
  path: string;
  authenticate: onRequestHookHandler;
  security: Record<string, string[]>[];
  scopeOf(request: FastifyRequest): EventScope;
  /** The API's error answers by status */
  errors: Record<number, z.ZodType>;
  answers: {
    list: Answer<EventList>;
    detail: Answer<z.infer<typeof eventDetailView>>;
    redelivered: Answer<{ deliveryId: string }>;
    replayed: Answer<z.infer<typeof replayView>>;
  };
}

const eventIdParam = z.object({ eventId: z.string().min(1).max(100) });
const timestamp = z.iso.datetime({ offset: true });

/** The fields of a replay body; refine it with `exactlyOneStart`. */
export const replayFields = z.object({
  since: timestamp.optional().describe('Replay every event created at or after this time'),
  afterEventId: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('Replay every event created after this one (the last one the receiver has)'),
});

export const exactlyOneStart: [
  (body: { since?: string | undefined; afterEventId?: string | undefined }) => boolean,
  { message: string; path: string[] },
] = [
  (body) => (body.since === undefined) !== (body.afterEventId === undefined),
  { message: 'give exactly one of since and afterEventId', path: ['since'] },
];

/** The reference's example: one start only (a schema cannot say "exactly one of"). */
export const REPLAY_EXAMPLE = { example: { since: '2026-11-01T00:00:00.000Z' } };

const replayBody = replayFields.refine(...exactlyOneStart).meta(REPLAY_EXAMPLE);

export async function registerTenantEventRoutes(
  app: ZodApp,
  events: EventsService,
  options: TenantEventRoutesOptions,
): Promise<void> {
  const { answers } = options;
  const only = (...statuses: number[]) =>
    Object.fromEntries(statuses.filter((s) => options.errors[s]).map((s) => [s, options.errors[s]]));
  const common = { onRequest: options.authenticate };
  const docs = { tags: ['events'], security: options.security };

  app.get(
    options.path,
    {
      ...common,
      schema: {
        ...docs,
        operationId: 'listEvents',
        summary: 'List your webhook events, newest first (Tessera extension)',
        querystring: eventListQuery,
        response: { 200: answers.list.schema, ...only(400, 401, 429) },
      },
    },
    async (request) => {
      const page = await events.list(toEventFilter(request.query), options.scopeOf(request));
      return answers.list.present(
        { data: page.events.map(presentEvent), nextCursor: page.nextCursor },
        request,
      );
    },
  );

  app.post(
    `${options.path}/replay`,
    {
      ...common,
      schema: {
        ...docs,
        operationId: 'replayEvents',
        summary: 'Send again every event since a time or after an event, oldest first (Tessera extension)',
        body: replayBody,
        response: { 202: answers.replayed.schema, ...only(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      const { since, afterEventId } = request.body;
      const result = await events.replay(
        { ...(since ? { since: new Date(since) } : {}), ...(afterEventId ? { afterEventId } : {}) },
        options.scopeOf(request),
      );
      return reply.code(202).send(answers.replayed.present(result, request));
    },
  );

  app.get(
    `${options.path}/:eventId`,
    {
      ...common,
      schema: {
        ...docs,
        operationId: 'getEvent',
        summary: 'One event with every delivery attempt (Tessera extension)',
        params: eventIdParam,
        response: { 200: answers.detail.schema, ...only(401, 404, 429) },
      },
    },
    async (request) =>
      answers.detail.present(
        presentEventDetail(await events.get(request.params.eventId, options.scopeOf(request))),
        request,
      ),
  );

  app.post(
    `${options.path}/:eventId/redeliver`,
    {
      ...common,
      schema: {
        ...docs,
        operationId: 'redeliverEvent',
        summary: 'Send one event again: same event id, fresh attempts (Tessera extension)',
        params: eventIdParam,
        response: { 202: answers.redelivered.schema, ...only(401, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      const result = await events.redeliver(request.params.eventId, options.scopeOf(request));
      return reply.code(202).send(answers.redelivered.present(result, request));
    },
  );
}
