// A fuzzer driven by Tessera's own OpenAPI documents: for every documented operation it builds requests
// from the operation's schemas with fast-check (mostly valid values, so requests reach deep into the
// services, mixed with hostile strings, wrong types, huge and empty values, other encodings and
// content types, broken or missing credentials) and checks every answer: never a 5xx, and every error
// in the API's own envelope, as JSON, with a request id.
import fc from 'fast-check';
import qs from 'qs';

// biome-ignore lint/suspicious/noExplicitAny: JSON Schema as the documents carry it
export type Schema = Record<string, any>;

export interface Operation {
  api: string;
  method: string;
  /** The path in the document (`/order/{id}`), under the API's base path */
  path: string;
  base: string;
  parameters: { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema?: Schema }[];
  body: Schema | undefined;
  /** The document declares a form body too (payments) */
  acceptsForm: boolean;
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Strings that break parsers, databases, encoders and assumptions. */
export const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\u202e\u0000',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🎉',
  'x'.repeat(70_000),
  '9'.repeat(400),
  '-1',
  '0',
  '-0',
  '1e309',
  'NaN',
  'Infinity',
  '0x10',
  '1.2.3',
  'null',
  'true',
  '{}',
  '[]',
  '{"a":',
  "'; DROP TABLE partners; --",
  '%00',
  '%',
  '../../../../etc/passwd',
  '<script>alert(1)</script>',
  'javascript:alert(1)',
  'http://169.254.169.254/latest/meta-data/',
  '2026-02-30T25:61:61Z',
  '99999999999999999999999999999999999999',
  '00000000-0000-0000-0000-000000000000',
  'evt_00000000000000000000000000',
];

const hostileString = fc.constantFrom(...HOSTILE_STRINGS);

/** Any JSON value, deep or wide, or a number no database column holds. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -1, 0.1, 2 ** 63, null, true, [], {}, [
    [[[[[[[[[[]]]]]]]]]],
  ]),
  fc.jsonValue({ maxDepth: 4 }),
);

/** Values for a schema: valid ones four times out of five. */
export function valueFor(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return hostileValue;
  return fc.oneof({ arbitrary: validFor(schema, depth), weight: 4 }, { arbitrary: hostileValue, weight: 1 });
}

function validFor(schema: Schema, depth: number): fc.Arbitrary<unknown> {
  const choices = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(choices) && choices.length > 0) {
    return fc.oneof(...choices.map((s: Schema) => validFor(s, depth + 1)));
  }
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) return validFor(schema.allOf[0], depth + 1);
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return stringFor(schema);
    case 'integer':
      return fc.integer({
        min: Math.max(Number(schema.minimum ?? -1_000_000), -1_000_000_000),
        max: Math.min(Number(schema.maximum ?? 1_000_000), 1_000_000_000),
      });
    case 'number':
      return fc.double({
        min: Number(schema.minimum ?? -1e6),
        max: Number(schema.maximum ?? 1e6),
        noNaN: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(valueFor(schema.items, depth + 1), {
        maxLength: Math.min(Number(schema.maxItems ?? 4), 4),
      });
    case 'object':
      return objectFor(schema, depth);
    default:
      return hostileValue;
  }
}

function stringFor(schema: Schema): fc.Arbitrary<string> {
  const maxLength = Math.min(Number(schema.maxLength ?? 40), 60);
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'email') return fc.emailAddress();
  if (schema.format === 'date-time') return fc.date({ noInvalidDate: true }).map((d) => d.toISOString());
  if (schema.format === 'uri') return fc.webUrl();
  if (typeof schema.pattern === 'string') {
    try {
      return fc
        .stringMatching(new RegExp(schema.pattern))
        .filter((s) => s.length <= Number(schema.maxLength ?? 1e6));
    } catch {
      // a pattern JavaScript cannot read: plain strings
    }
  }
  return fc.string({ minLength: Number(schema.minLength ?? 0), maxLength });
}

function objectFor(schema: Schema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set<string>(schema.required ?? []);
  const fields = Object.fromEntries(
    Object.entries(properties).map(([name, s]) => [
      name,
      required.has(name)
        ? valueFor(s, depth + 1)
        : fc.option(valueFor(s, depth + 1), { nil: undefined, freq: 2 }),
    ]),
  );
  const requiredOnly = fc.record(
    Object.fromEntries(Object.entries(fields).filter(([name]) => required.has(name))),
  ) as fc.Arbitrary<Record<string, unknown>>;
  return fc
    .tuple(
      fc.oneof(
        { arbitrary: fc.record(fields) as fc.Arbitrary<Record<string, unknown>>, weight: 4 },
        // Nothing but what is required (often: nothing at all), the edge of every update.
        { arbitrary: requiredOnly, weight: 1 },
      ),
      fc.option(fc.dictionary(fc.oneof(fc.string(), hostileString), hostileValue, { maxKeys: 2 }), {
        freq: 4,
      }),
    )
    .map(([record, extra]) => {
      const clean = Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
      return extra ? { ...extra, ...clean } : clean;
    });
}

/** Every operation of a document. */
export function operationsOf(api: string, base: string, document: Schema): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {}) as [string, Schema][]) {
    for (const [method, op] of Object.entries(item) as [string, Schema][]) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const content = op.requestBody?.content ?? {};
      operations.push({
        api,
        method: method.toUpperCase(),
        path,
        base,
        parameters: op.parameters ?? [],
        body: content['application/json']?.schema ?? content['application/x-www-form-urlencoded']?.schema,
        acceptsForm: api === 'payments' || 'application/x-www-form-urlencoded' in content,
      });
    }
  }
  return operations;
}

/** Requests for one operation: known ids for path parameters often, generated values otherwise. */
export function requestsFor(
  op: Operation,
  credentials: fc.Arbitrary<Record<string, string>>,
  knownIds: Record<string, string[]>,
): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query');
  const pathValues = fc.tuple(
    ...pathParams.map((p) => {
      const known = knownIds[p.name] ?? knownIds.id ?? [];
      const generated = valueFor(p.schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      return known.length > 0
        ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 3 }, { arbitrary: generated, weight: 1 })
        : generated;
    }),
  );
  const query = fc.record(
    Object.fromEntries(
      queryParams.map((p) => [p.name, fc.option(valueFor(p.schema), { nil: undefined, freq: 2 })]),
    ),
  );
  const encoding = fc.constantFrom(
    ...(op.acceptsForm
      ? (['json', 'json', 'form', 'form', 'garbage', 'nested'] as const)
      : (['json', 'json', 'json', 'garbage', 'nested'] as const)),
  );
  const garbage = fc.record({
    contentType: fc.constantFrom(
      'application/json',
      'application/json; charset=latin1',
      'application/x-www-form-urlencoded',
      'text/plain',
      'application/xml',
      'multipart/form-data; boundary=x',
      'application/vnd.api+json',
    ),
    text: fc.oneof(hostileString, fc.string({ maxLength: 200 }), fc.constant('{"a":[1,2')),
  });
  return fc
    .record({
      pathValues,
      query,
      body: valueFor(op.body),
      encoding,
      garbage,
      nested: fc.record({
        depth: fc.oneof(fc.integer({ min: 30, max: 40 }), fc.integer({ min: 1000, max: 10_000 })),
        open: fc.constantFrom('[', '{"a":'),
        contentType: fc.constantFrom('application/json', 'application/vnd.api+json'),
      }),
      credentials,
      idempotencyKey: fc.option(fc.oneof(fc.string({ minLength: 1, maxLength: 40 }), hostileString), {
        freq: 3,
      }),
    })
    .map(
      ({
        pathValues: values,
        query: q,
        body,
        encoding: enc,
        garbage: junk,
        nested,
        credentials: creds,
        idempotencyKey,
      }) => {
        let path = op.path;
        pathParams.forEach((p, i) => {
          path = path.replace(`{${p.name}}`, percentEncode(String(values[i] ?? '')));
        });
        const queryText = qs.stringify(
          Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined)),
          { encoder: (value) => percentEncode(String(value)) },
        );
        const headers: Record<string, string> = { ...creds };
        if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey.replace(/[\r\n]/g, '');
        let text: string | undefined;
        if (op.method !== 'GET' && (op.body !== undefined || enc === 'garbage')) {
          if (enc === 'json') {
            headers['content-type'] = 'application/json';
            text = JSON.stringify(body) ?? 'null';
          } else if (enc === 'form') {
            headers['content-type'] = 'application/x-www-form-urlencoded';
            text =
              typeof body === 'object' && body !== null
                ? qs.stringify(body, { encoder: (value) => percentEncode(String(value)) })
                : percentEncode(String(body));
          } else if (enc === 'nested') {
            headers['content-type'] = nested.contentType;
            text = nestedJson(nested.depth, nested.open);
          } else {
            headers['content-type'] = junk.contentType;
            text = junk.text;
          }
        }
        return {
          method: op.method,
          url: `${op.base}${path}${queryText ? `?${queryText}` : ''}`,
          headers,
          body: text,
        };
      },
    );
}

/** A body of arrays or objects nested `depth` levels deep (10,000 levels are 20 KB). */
export function nestedJson(depth: number, open: '[' | '{"a":'): string {
  const close = open === '[' ? ']' : '}';
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
}

export interface FuzzAnswer {
  status: number;
  contentType: string | null;
  requestId: string | null;
  text: string;
}

/** What is wrong with an answer, or undefined when it is as promised. */
export function problemWith(api: string, answer: FuzzAnswer): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}`;
  if (answer.status < 400) return undefined;
  if (!answer.requestId) return `${answer.status} without x-request-id`;
  if (!answer.contentType?.startsWith('application/json')) return `${answer.status} as ${answer.contentType}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    return `${answer.status} with a body that is not JSON`;
  }
  const matches =
    api === 'issuing'
      ? body.code === answer.status && typeof body.message === 'string' && typeof body.error === 'string'
      : api === 'payments'
        ? Array.isArray(body.error) && typeof (body.error[0] as { type?: unknown })?.type === 'string'
        : api === 'crypto'
          ? Array.isArray(body.errors) && typeof (body.errors[0] as { detail?: unknown })?.detail === 'string'
          : typeof (body.error as { code?: unknown } | undefined)?.code === 'string';
  return matches ? undefined : `${answer.status} outside the ${api} envelope: ${answer.text.slice(0, 200)}`;
}

/**
 * Percent-encodes text as its UTF-8 bytes, a lone surrogate as the three bytes WTF-8 gives it (what a
 * hostile client sends; encodeURIComponent refuses to).
 */
export function percentEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    let point = unit;
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      point = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
      i++;
    }
    const char = String.fromCharCode(point);
    if (point < 0x80 && /[A-Za-z0-9\-_.~]/.test(char)) {
      out += char;
      continue;
    }
    const bytes =
      point < 0x80
        ? [point]
        : point < 0x800
          ? [0xc0 | (point >> 6), 0x80 | (point & 63)]
          : point < 0x10000
            ? [0xe0 | (point >> 12), 0x80 | ((point >> 6) & 63), 0x80 | (point & 63)]
            : [
                0xf0 | (point >> 18),
                0x80 | ((point >> 12) & 63),
                0x80 | ((point >> 6) & 63),
                0x80 | (point & 63),
              ];
    out += bytes.map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return out;
}
