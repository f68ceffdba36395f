// One embedded Postgres per test run; a template database migrated once (and given pg-boss's schema),
// from which every test file clones its own database.
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureDatabase, startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.ts';
import { migrate } from '../../src/platform/db/migrate.ts';
import { installJobSchema } from '../../src/platform/jobs/job-queue.ts';

export const TEMPLATE_DATABASE = 'tessera_template';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresAdminUrl: string;
    postgresUrlPrefix: string;
    /** The test cluster's files (its write-ahead log is read by the secrets-at-rest test) */
    postgresDataDir: string;
    /** Where the harness keeps the OpenAPI documents it fetched, once per configuration (document-cache.ts) */
    documentCacheDir: string;
  }
}

let teardownRun: (() => Promise<void>) | undefined;

export async function setup(project: TestProject): Promise<void> {
  const directory = await mkdtemp(join(tmpdir(), 'tessera-test-pg-'));
  // Postgres runs as an unprivileged user when the tests run as root: it must be able to enter the directory.
  await chmod(directory, 0o755);
  const password = randomBytes(12).toString('hex');
  // A throwaway cluster: durability settings off make the suite fast; bench and production keep them on.
  const server = await startEmbeddedPostgres({
    directory: join(directory, 'data'),
    password,
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
  });
  await ensureDatabase(server.connectionString('postgres'), TEMPLATE_DATABASE);
  const templateUrl = server.connectionString(TEMPLATE_DATABASE);
  await migrate(templateUrl);
  await installJobSchema(templateUrl);
  project.provide('postgresAdminUrl', server.connectionString('postgres'));
  project.provide('postgresUrlPrefix', server.connectionString(''));
  project.provide('postgresDataDir', join(directory, 'data'));
  project.provide('documentCacheDir', join(directory, 'documents'));
  teardownRun = async () => {
    await server.stop();
    await rm(directory, { recursive: true, force: true });
  };
}

export async function teardown(): Promise<void> {
  await teardownRun?.();
}
