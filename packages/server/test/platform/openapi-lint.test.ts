// Every OpenAPI document, as served, under Redocly's recommended rules (the linter of the field): no
// error and no warning. Beyond the rules: every operation has an operationId (unique in its document) and
// a summary, security applies to every operation that takes a credential, and the payments API lists the
// form encoding beside JSON on every body.
import { createConfig, lintFromString } from '@redocly/openapi-core';
import type { OpenAPIV3 } from 'openapi-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(() => h.close());

const APIS = ['issuing', 'payments', 'crypto', 'admin', 'sandbox'] as const;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

const operationsOf = (doc: OpenAPIV3.Document) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item?.[m]).map((m) => ({
      path,
      method: m,
      operation: item?.[m] as OpenAPIV3.OperationObject,
    })),
  );

/**
 * Problems accepted with a reason. The spec's `/transactions/3d-secure/{transactionAuthId}` and the
 * disputes of a transaction (`/transactions/{transactionId}/disputes`) would both match
 * `/transactions/3d-secure/disputes`; a transaction id is a UUID, never `3d-secure`, the two take
 * different methods, and the router matches the static segment first, so no request is ambiguous.
 */
const KNOWN = [
  'warn no-ambiguous-paths: Paths should resolve unambiguously. Found two ambiguous paths: `/transactions/3d-secure/{transactionAuthId}` and `/transactions/{transactionId}/disputes`. at #/paths/~1transactions~1{transactionId}~1disputes',
];

describe.each(APIS)('the %s document', (api) => {
  it('lints clean under the recommended rules', async () => {
    const source = await (await fetch(`${h.baseUrl}/docs/${api}/openapi.json`)).text();
    const problems = await lintFromString({
      source,
      absoluteRef: `${api}.json`,
      config: await createConfig({ extends: ['recommended'] }),
    });
    expect(
      problems
        .map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)
        .filter((problem) => !KNOWN.includes(problem)),
    ).toEqual([]);
  });

  it('names, summarises and secures every operation', async () => {
    const doc = (await (await fetch(`${h.baseUrl}/docs/${api}/openapi.json`)).json()) as OpenAPIV3.Document;
    const operations = operationsOf(doc);
    expect(operations.length).toBeGreaterThan(3);
    const ids = operations.map((o) => o.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, method, operation } of operations) {
      expect(operation.operationId, `${method} ${path}`).toMatch(/^[a-zA-Z][a-zA-Z0-9]*$/);
      expect(operation.summary, `${method} ${path}`).toBeTruthy();
      const security = operation.security ?? doc.security ?? [];
      if (api !== 'issuing')
        expect(security.length > 0 || path === '/stores/session', `${method} ${path}`).toBe(true);
      const body = operation.requestBody as OpenAPIV3.RequestBodyObject | undefined;
      if (api === 'payments' && body?.content['application/json']) {
        expect(Object.keys(body.content).sort(), `${method} ${path}`).toEqual([
          'application/json',
          'application/x-www-form-urlencoded',
        ]);
      }
    }
  });
});
