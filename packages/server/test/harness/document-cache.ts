// The OpenAPI documents every harness holds its file's exchanges to, fetched once per test run for each
// configuration. A server builds its five documents on their first request (about 7 s of CPU on a 2-core
// machine), every server of one configuration builds the same bytes (they name no port or host), and each
// test file runs its own server: fetched per file, building them was most of a file's time.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OpenAPIV3 } from 'openapi-types';
import { inject } from 'vitest';
import { documentsOf } from './document-check.ts';

/** The documents a server with these settings serves, from the run's cache when another file fetched them. */
export async function cachedDocumentsOf(
  baseUrl: string,
  settings: Record<string, string>,
): Promise<Map<string, OpenAPIV3.Document>> {
  const directory = inject('documentCacheDir');
  const key = createHash('sha256')
    .update(JSON.stringify(Object.entries(settings).sort(([a], [b]) => a.localeCompare(b))))
    .digest('hex')
    .slice(0, 16);
  const file = join(directory, `${key}.json`);
  try {
    return new Map(JSON.parse(await readFile(file, 'utf8')) as [string, OpenAPIV3.Document][]);
  } catch {
    const documents = await documentsOf(baseUrl);
    // Written whole, then renamed: a file that reads it at the same moment sees all of it or nothing.
    await mkdir(directory, { recursive: true });
    const partial = `${file}.${randomBytes(4).toString('hex')}`;
    await writeFile(partial, JSON.stringify([...documents]));
    await rename(partial, file);
    return documents;
  }
}
