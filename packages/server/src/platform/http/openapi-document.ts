// What every OpenAPI document gets after the routes have described themselves: an `operationId` on each
// operation that did not name one (from its method and path: `GET /order/{id}` → `getOrderById`, stable
// and unique, which generated clients use as method names), the form encoding beside JSON on the bodies
// of an API that takes both, and single-member `anyOf`/`oneOf`/`allOf`
// collapsed into their member (a union whose other members have no JSON Schema form, as a decimal that is
// also accepted as a number in a form body, says nothing more as a composition).
import type { OpenAPIV3 } from 'openapi-types';

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
      // An API that takes form bodies as well as JSON says so for every body (the same schema).
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      const json = body?.content?.['application/json'];
      if (options.formBodies && body && json && !body.content['application/x-www-form-urlencoded']) {
        body.content['application/x-www-form-urlencoded'] = { schema: json.schema };
      }
    }
  }
  collapseSingleCompositions(document);
  return document;
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
