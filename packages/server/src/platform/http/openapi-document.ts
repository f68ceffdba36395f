// What every OpenAPI document gets after the routes have described themselves: an `operationId` on each
// operation that did not name one (from its method and path: `GET /order/{id}` → `getOrderById`, stable
// and unique, which generated clients use as method names), the form encoding beside JSON on the bodies
// of an API that takes both, and single-member `anyOf`/`oneOf`/`allOf`
// collapsed into their member (a union whose other members have no JSON Schema form, as a decimal that is
// also accepted as a number in a form body, says nothing more as a composition), a description of each
// answer in the API's envelope, and an example of every body and answer (openapi-examples.ts).
import type { OpenAPIV3 } from 'openapi-types';
import { conformingExampleOf, exampleOf } from './openapi-examples.ts';

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

/** Hand-written request examples by operationId: named variants, each a request the sandbox accepts */
export type RequestExamples = Record<string, Record<string, { summary: string; value: unknown }>>;

export interface DocumentOptions {
  formBodies?: boolean;
  requestExamples?: RequestExamples;
  /** The media type the API answers its successes in, when not application/json (crypto: JSON:API) */
  successMediaType?: string;
}

export function completeDocument<T extends OpenAPIV3.Document>(
  document: T,
  options: DocumentOptions = {},
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
      // A body that is a file of its own format (a sanctions list's XML) is described as `x-raw-body`.
      const raw = operation as typeof operation & {
        'x-raw-body'?: { mediaTypes: string[]; schema: OpenAPIV3.SchemaObject; example: string };
      };
      const rawBody = raw['x-raw-body'];
      if (rawBody) {
        operation.requestBody = {
          required: true,
          content: Object.fromEntries(
            rawBody.mediaTypes.map((type) => [type, { schema: rawBody.schema, example: rawBody.example }]),
          ),
        };
        delete raw['x-raw-body'];
      }
      // An API that takes form bodies as well as JSON says so for every body (the same schema).
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      const json = body?.content?.['application/json'];
      if (options.formBodies && body && json && !body.content['application/x-www-form-urlencoded']) {
        body.content['application/x-www-form-urlencoded'] = { schema: json.schema };
      }
      // A body that may be left out (its schema takes null: a DELETE's optional reason) is not required.
      if (body && Object.values(body.content).every((media) => isOptional(media.schema)))
        body.required = false;
      if (options.successMediaType && body && json && !body.content[options.successMediaType]) {
        body.content[options.successMediaType] = { schema: json.schema };
      }
      const examples = options.requestExamples?.[operation.operationId];
      for (const media of Object.values(body?.content ?? {})) {
        if (examples) {
          delete media.example;
          media.examples = structuredClone(examples);
        } else withExample(media);
      }
      // A required parameter gets an example too ("try it" fills it in); an optional one stays empty.
      for (const parameter of (operation.parameters ?? []) as OpenAPIV3.ParameterObject[]) {
        if (!parameter.required || parameter.example !== undefined || !parameter.schema) continue;
        const example = conformingExampleOf(
          parameter.schema as NonNullable<Parameters<typeof exampleOf>[0]>,
          parameter.name,
        );
        if (example !== undefined) parameter.example = example;
      }
      for (const answer of Object.values(operation.responses ?? {})) {
        answerMediaTypes(answer as OpenAPIV3.ResponseObject);
      }
      describeProtocol(method, operation, options);
      for (const [status, answer] of Object.entries(operation.responses ?? {})) {
        const response = answer as OpenAPIV3.ResponseObject;
        if (!response.description || response.description === 'Default Response') {
          response.description = STATUS_TEXT[status] ?? `HTTP ${status}`;
        }
        for (const media of Object.values(response.content ?? {})) withExample(media, status);
      }
    }
  }
  collapseSingleCompositions(document);
  return document;
}

const WRITES = new Set(['post', 'put', 'patch', 'delete']);
const header = (description: string, schema: OpenAPIV3.SchemaObject = { type: 'string' }) => ({
  description,
  schema,
});

/**
 * What every operation of every API does beyond its own route, said in its document so a generated
 * client knows it: the request id on every answer; a write's Idempotency-Key header, its replay marker,
 * and its 409 and 422; 429 and 503 with Retry-After on any operation. A route that refuses the key marks
 * itself `x-idempotency: refuse` (api-scope.ts), and gets neither the header nor the key's answers.
 */
function describeProtocol(
  method: string,
  operation: OpenAPIV3.OperationObject,
  options: DocumentOptions,
): void {
  const extended = operation as OpenAPIV3.OperationObject & { 'x-idempotency'?: string };
  const keyed = WRITES.has(method) && extended['x-idempotency'] !== 'refuse';
  delete extended['x-idempotency'];
  const responses = operation.responses;
  const errorAnswer = Object.entries(responses).find(
    ([status, r]) => /^4/.test(status) && 'content' in r && r.content,
  )?.[1] as OpenAPIV3.ResponseObject | undefined;
  const refusal = (status: string): OpenAPIV3.ResponseObject => ({
    description: STATUS_TEXT[status] ?? `HTTP ${status}`,
    ...(errorAnswer?.content ? { content: structuredClone(errorAnswer.content) } : {}),
  });
  if (keyed) {
    operation.parameters ??= [];
    const parameters = operation.parameters as OpenAPIV3.ParameterObject[];
    if (!parameters.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key')) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Makes the write safe to retry (1 to 255 visible ASCII characters): the same key and body answer the first answer (with Idempotency-Replayed: true) for 24 hours; the same key with another body is a 422, a concurrent duplicate a 409.',
        schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
      });
    }
    for (const status of ['409', '422']) responses[status] ??= refusal(status);
  }
  // A body the server does not take (too large, or of a media type it does not read) is refused before the route.
  if (operation.requestBody) for (const status of ['413', '415']) responses[status] ??= refusal(status);
  // An internal error can answer any operation (nothing was changed: its transaction rolled back).
  responses['500'] ??= refusal('500');
  for (const status of ['429', '503']) {
    responses[status] ??= refusal(status);
    const answer = responses[status] as OpenAPIV3.ResponseObject;
    answer.headers = {
      ...answer.headers,
      'Retry-After': header('Seconds to wait before retrying', { type: 'integer' }),
    };
  }
  for (const [status, answer] of Object.entries(responses)) {
    const response = answer as OpenAPIV3.ResponseObject;
    response.headers = {
      'x-request-id': header('This request’s id, also in the error envelope and the logs'),
      ...response.headers,
    };
    // A keyed write's answer is stored and replayed whatever it was, but for a 5xx (rolled back, stored nothing).
    if (keyed && !/^5/.test(status)) {
      response.headers['Idempotency-Replayed'] = header(
        '`true` when this is the stored answer of an earlier request with the same Idempotency-Key',
        { type: 'string', enum: ['true'] },
      );
    }
    if (!/^2/.test(status)) continue;
    const json = response.content?.['application/json'];
    if (options.successMediaType && response.content && json) {
      delete response.content['application/json'];
      response.content[options.successMediaType] = json;
    }
  }
}

/**
 * A route answers a text format by describing its string answer with the media type
 * (`z.string().describe('text/csv')`), alone or as one member of a union beside JSON (a topup's hosted
 * page for a browser, its JSON for an API client): the document lists each under its own media type.
 */
function answerMediaTypes(response: OpenAPIV3.ResponseObject): void {
  const schema = response.content?.['application/json']?.schema as OpenAPIV3.SchemaObject | undefined;
  if (!response.content || !schema) return;
  const mediaOf = (member: OpenAPIV3.SchemaObject) =>
    member.type === 'string' && /^[a-z]+\/[a-z0-9.+-]+$/.test(member.description ?? '')
      ? member.description
      : undefined;
  const members = (schema.anyOf ?? schema.oneOf ?? [schema]) as OpenAPIV3.SchemaObject[];
  const texts = members.filter((member) => mediaOf(member));
  if (texts.length === 0) return;
  const rest = members.filter((member) => !mediaOf(member));
  delete response.content['application/json'];
  if (rest.length === 1) response.content['application/json'] = { schema: rest[0] as OpenAPIV3.SchemaObject };
  else if (rest.length > 1)
    response.content['application/json'] = { schema: { [schema.anyOf ? 'anyOf' : 'oneOf']: rest } };
  for (const text of texts) response.content[mediaOf(text) as string] = { schema: { type: 'string' } };
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

function isOptional(schema: OpenAPIV3.MediaTypeObject['schema']): boolean {
  if (!schema || '$ref' in schema) return false;
  const members = schema.anyOf ?? schema.oneOf;
  return (members ?? []).some((member) => '$ref' in member === false && (member.type as string) === 'null');
}

/** What a success envelope's `message` says for its status (payments: `{code, message, data}`). */
const SUCCESS_MESSAGE: Record<string, string> = { '200': 'Success', '201': 'Created', '202': 'Accepted' };

/**
 * An answer's example speaks its own status: every envelope's top-level integer `code` is the HTTP
 * status, and a success envelope's `message` is the status's word (a 201 is "Created", never "Success").
 */
function withExample(media: OpenAPIV3.MediaTypeObject, status?: string): void {
  if (media.example !== undefined || media.examples) return;
  const example = exampleOf(media.schema as Parameters<typeof exampleOf>[0]);
  if (example === undefined) return;
  if (status && /^\d{3}$/.test(status) && example !== null && typeof example === 'object') {
    const envelope = example as Record<string, unknown>;
    // Only an envelope ({code, message, …}): a `message` beside no code is an answer's own field (a
    // wallet sign-in's message to sign).
    if (typeof envelope.code === 'number') {
      envelope.code = Number(status);
      if (typeof envelope.message === 'string' && SUCCESS_MESSAGE[status])
        envelope.message = SUCCESS_MESSAGE[status];
    }
  }
  media.example = example;
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
