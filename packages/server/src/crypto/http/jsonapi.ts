// JSON:API plumbing shared by the crypto routes: the media type, money objects and the error responses.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainError } from '../../platform/errors/domain-error.ts';
import { parseClientJson } from '../../platform/http/client-json.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';

export const JSON_API = 'application/vnd.api+json';

/** Accept `application/vnd.api+json` bodies as JSON (plain application/json is fastify's own). */
export function acceptJsonApi(app: FastifyInstance): void {
  app.addContentTypeParser(JSON_API, { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, body === '' ? null : parseClientJson(body as string, 'body'));
    } catch (err) {
      if (err instanceof DomainError) {
        done(err, undefined);
        return;
      }
      const error = new Error('the body is not valid JSON') as Error & { statusCode: number };
      error.statusCode = 400;
      done(error, undefined);
    }
  });
}

/**
 * Every successful JSON answer of the API is a JSON:API document and says so (the routes shared with the
 * other APIs, the event log's, answer plain JSON otherwise); errors stay application/json, as the real
 * service sends them; CSV reports and pages keep their own media types.
 */
export function answerJsonApi(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    const isJson = String(reply.getHeader('content-type') ?? '').startsWith('application/json');
    if (isJson && reply.statusCode < 300) {
      reply.header('content-type', `${JSON_API}; charset=utf-8`);
    }
    return payload;
  });
}

export const money = z.object({ currency: z.string(), value: z.string() });
export const moneyOf = (minor: bigint, currency: string) => ({
  currency,
  value: formatAmountIn(minor, currency),
});

const errorItem = z.object({
  status: z.string(),
  code: z.string(),
  title: z.string(),
  detail: z.string(),
  source: z.object({ pointer: z.string() }).optional(),
});
const errorDocument = z.object({
  code: z.number(),
  message: z.string(),
  errors: z.array(errorItem),
  requestId: z.string(),
});
export const errors = {
  400: errorDocument,
  401: errorDocument,
  403: errorDocument,
  404: errorDocument,
  409: errorDocument,
  422: errorDocument,
};

/** A decimal amount as text (or a JSON number, re-read exactly) */
export const decimalText = z.union([z.string().max(40), z.number()]);
