// What every OpenAPI document gets after the routes have described themselves: an `operationId` on each
// operation that did not name one (from its method and path: `GET /order/{id}` → `getOrderById`, stable
// and unique, which generated clients use as method names), the form encoding beside JSON on the bodies
// of an API that takes both, and single-member `anyOf`/`oneOf`/`allOf`
// collapsed into their member (a union whose other members have no JSON Schema form, as a decimal that is
// also accepted as a number in a form body, says nothing more as a composition), a description of each
// answer in the API's envelope, and an example of every body and answer (openapi-examples.ts).
import type { OpenAPIV3 } from 'openapi-types';
import { exampleOf } from './openapi-examples.ts';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment)?.[1];
      return param ? `By${pascal(param)}` : pascal(segment);
    });
  return `${method.toLowerCase()}${words.join('')}`;
}

const pascal = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join('');

export function completeDocument<T extends OpenAPIV3.Document>(
  document: T,
  options: { formBodies?: boolean } = {},
): T {
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      const operation = item?.[method];
      if (!operation) continue;
      if (!operation.operationId) operation.operationId = operationIdOf(method, path);
      // A body Fastify does not parse itself (an upload) is described by the route as `x-multipart-body`.
      const extended = operation as typeof operation & { 'x-multipart-body'?: OpenAPIV3.SchemaObject };
      if (extended['x-multipart-body']) {
        operation.requestBody = {
          required: true,
          content: { 'multipart/form-data': { schema: extended['x-multipart-body'] } },
        };
        delete extended['x-multipart-body'];
      }
      // An API that takes form bodies as well as JSON says so for every body (the same schema).
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      const json = body?.content?.['application/json'];
      if (options.formBodies && body && json && !body.content['application/x-www-form-urlencoded']) {
        body.content['application/x-www-form-urlencoded'] = { schema: json.schema };
      }
      for (const media of Object.values(body?.content ?? {})) withExample(media);
      for (const [status, answer] of Object.entries(operation.responses ?? {})) {
        const response = answer as OpenAPIV3.ResponseObject;
        if (!response.description || response.description === 'Default Response') {
          response.description = STATUS_TEXT[status] ?? `HTTP ${status}`;
        }
        for (const media of Object.values(response.content ?? {})) withExample(media);
      }
    }
  }
  collapseSingleCompositions(document);
  return document;
}

/** What each answer means, in the API's envelope, when the route did not say. */
const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted: done in the background',
  '204': 'Done, nothing to answer',
  '400': 'Bad input: the envelope names the field',
  '401': 'The credential is missing, invalid or revoked',
  '402': 'The payment was declined: the envelope says why',
  '403': 'Not allowed for this credential or tenant',
  '404': 'Not found (another tenant’s objects are not found either)',
  '409': 'Conflicts with the object’s state, or with a request running with the same Idempotency-Key',
  '413': 'The body is too large',
  '414': 'The URL is too long',
  '415': 'The body’s media type is not accepted',
  '422': 'Not processable: a limit, or an Idempotency-Key reused with another body',
  '429': 'Rate limited: retry after Retry-After seconds',
  '431': 'The request headers are too large',
  '500': 'Internal error (nothing was changed)',
  '503':
    'A rail or the database is unavailable for a moment (a restart, a failover): retry after Retry-After seconds, a write with the same Idempotency-Key',
};

function withExample(media: OpenAPIV3.MediaTypeObject): void {
  if (media.example !== undefined || media.examples) return;
  const example = exampleOf(media.schema as Parameters<typeof exampleOf>[0]);
  if (example !== undefined) media.example = example;
}

function collapseSingleCompositions(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) collapseSingleCompositions(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const record = node as Record<string, unknown>;
  for (const keyword of ['anyOf', 'oneOf', 'allOf']) {
    const members = record[keyword];
    if (Array.isArray(members) && members.length === 1 && typeof members[0] === 'object') {
      delete record[keyword];
      Object.assign(record, { ...(members[0] as object), ...record });
    }
  }
  for (const value of Object.values(record)) collapseSingleCompositions(value);
}
