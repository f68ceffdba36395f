// Holds real exchanges to the OpenAPI documents the server serves beside them (the SDK is generated from
// them, so they must tell the truth): the operation exists, the status is one it lists, the media type is
// one it lists, the body validates against its schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it)
// and the headers it always sends are there. Every harness records the exchanges of its test file and
// checks them when it closes (Harness.close), so the whole suite's traffic keeps the documents honest.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { OpenAPIV3 } from 'openapi-types';

export interface Exchange {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

export const APIS = [
  { name: 'issuing', prefix: '/issuing/v1' },
  { name: 'payments', prefix: '/payments' },
  { name: 'crypto', prefix: '/crypto/api' },
  { name: 'admin', prefix: '/admin' },
  { name: 'sandbox', prefix: '/sandbox' },
] as const;

type Documents = Map<string, OpenAPIV3.Document>;

/** The five documents as a server serves them. */
export async function documentsOf(baseUrl: string): Promise<Documents> {
  const documents: Documents = new Map();
  for (const api of APIS) {
    const answer = await fetch(`${baseUrl}/docs/${api.name}/openapi.json`);
    if (answer.ok) documents.set(api.name, (await answer.json()) as OpenAPIV3.Document);
  }
  return documents;
}

export class DocumentCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly validators = new Map<string, ReturnType<Ajv2020['compile']>>();

  constructor(private readonly documents: Documents) {
    addFormats.default(this.ajv);
  }

  /** How many response schemas bodies were held to */
  get schemasUsed(): number {
    return this.validators.size;
  }

  /** What is wrong with the exchange against its document (nothing for paths no API serves). */
  problemsOf(exchange: Exchange): string[] {
    const [pathname = ''] = exchange.path.split('?');
    const api = APIS.find((a) => pathname === a.prefix || pathname.startsWith(`${a.prefix}/`));
    const name = `${exchange.method} ${pathname} → ${exchange.status}`;
    const document = api && this.documents.get(api.name);
    if (!api || !document) return [];
    const found = operationOf(
      document,
      exchange.method.toLowerCase(),
      pathname.slice(api.prefix.length) || '/',
    );
    // A path no route serves is the router's 404 (or 405, or the rate limit's 429, which comes first),
    // and the reference pages are not operations.
    if (!found) {
      const unrouted = [404, 405, 429].includes(exchange.status) || pathname.startsWith(`${api.prefix}/docs`);
      return unrouted ? [] : [`${name}: no operation in the ${api.name} document`];
    }
    const { path, operation } = found;
    const status = String(exchange.status) in operation.responses ? String(exchange.status) : 'default';
    const response = operation.responses[status] as OpenAPIV3.ResponseObject | undefined;
    if (!response) return [`${name}: status not in ${operation.operationId}'s responses`];
    const problems: string[] = [];
    for (const header of Object.keys(response.headers ?? {})) {
      const always = header === 'x-request-id' || header === 'Retry-After';
      if (always && !exchange.headers.has(header)) problems.push(`${name}: no ${header} header`);
    }
    if (exchange.headers.get('idempotency-replayed') && !response.headers?.['Idempotency-Replayed'])
      problems.push(`${name}: a replay the document does not declare`);
    const media = (exchange.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
    if (exchange.text === '' || exchange.status === 204) return problems;
    const content = response.content?.[media];
    if (!content) {
      problems.push(`${name}: ${media} not in [${Object.keys(response.content ?? {}).join(', ')}]`);
      return problems;
    }
    if (!media.endsWith('json') || !content.schema) return problems;
    const pointer = `#/paths/${pointerSegment(path)}/${exchange.method.toLowerCase()}/responses/${status}/content/${pointerSegment(media)}/schema`;
    let validate = this.validators.get(`${api.name}${pointer}`);
    if (!validate) {
      if (!this.ajv.getSchema(api.name)) this.ajv.addSchema(document as object, api.name);
      validate = this.ajv.compile({ $ref: `${api.name}${pointer}` });
      this.validators.set(`${api.name}${pointer}`, validate);
    }
    const body = JSON.parse(exchange.text) as unknown;
    if (!validate(body))
      problems.push(`${name}: ${this.ajv.errorsText(validate.errors)} in ${exchange.text.slice(0, 300)}`);
    problems.push(...exampleProblems(name, content.example, body, exchange.status));
    return problems;
  }
}

/**
 * The documented example against the real answer: the envelope's status fields must agree (a top-level
 * `code`, and a success's `message`), so the reference never shows an answer the server does not give.
 */
function exampleProblems(name: string, example: unknown, body: unknown, status: number): string[] {
  if (!isRecord(example) || !isRecord(body)) return [];
  // An envelope is an answer with a numeric code; a `message` elsewhere is the answer's own field.
  if (typeof example.code !== 'number' || typeof body.code !== 'number') return [];
  const fields = status < 300 ? ['code', 'message'] : ['code'];
  return fields
    .filter((field) => field in example && field in body && example[field] !== body[field])
    .map(
      (field) =>
        `${name}: the documented example says ${field} ${JSON.stringify(example[field])}, the answer ${JSON.stringify(body[field])}`,
    );
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

const pointerSegment = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** The operation a request path is, static segments first (as the router matches). */
function operationOf(document: OpenAPIV3.Document, method: string, path: string) {
  const candidates = Object.entries(document.paths)
    .filter(([template]) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}/?$`).test(path))
    .sort(([a], [b]) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
  for (const [template, item] of candidates) {
    const operation = item?.[method as 'get'];
    if (operation) return { path: template, operation };
  }
  return undefined;
}
