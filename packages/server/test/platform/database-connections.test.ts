// The database connections `tessera serve` opens, against real servers: the embedded Postgres is started
// with room for every worker's pool and without a Unix socket (no lock file in the shared /tmp); an
// external one is asked its max_connections, and the pool divided among the workers or the start refused.
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { servingPoolSize } from '../../src/boot.ts';
import { parseConfig } from '../../src/config.ts';
import { ConnectionBudgetError } from '../../src/platform/db/connection-budget.ts';
import { fixForStartFailure, startEmbeddedPostgres } from '../../src/platform/db/embedded-postgres.ts';
import { createTestDatabase } from '../harness/test-database.ts';

async function show(url: string, setting: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Record<string, string>>(`SHOW ${setting}`)).rows[0]?.[setting] ?? '';
  } finally {
    await client.end();
  }
}

describe('the embedded Postgres', () => {
  it('has room for every worker’s pool, and no Unix socket or lock file in /tmp', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-connections-'));
    await chmod(dir, 0o755); // as root, the server runs as the user postgres, who must reach its directory
    const server = await startEmbeddedPostgres({
      directory: join(dir, 'postgres'),
      password: 'secret-password',
      maxConnections: 429,
      onNotice: () => undefined,
    });
    try {
      const url = server.connectionString('postgres');
      expect(await show(url, 'max_connections')).toBe('429');
      expect(await show(url, 'unix_socket_directories')).toBe('');
      expect(existsSync(`/tmp/.s.PGSQL.${server.port}.lock`)).toBe(false);
      expect(existsSync(`/tmp/.s.PGSQL.${server.port}`)).toBe(false);
    } finally {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('says what to do when it cannot start, for the errors a first start meets', () => {
    const lock = fixForStartFailure(
      ['FATAL:  could not create lock file "/tmp/.s.PGSQL.5432.lock": Permission denied'],
      '/data/postgres',
      'postgres',
    );
    expect(lock).toMatch(/make \/tmp writable by the user the server runs as \(postgres\)/);
    expect(lock).toMatch(/remove the file and start again/);
    expect(
      fixForStartFailure(['could not bind IPv4 address "127.0.0.1": Address already in use'], 'd', 'u'),
    ).toMatch(/start again/);
    expect(fixForStartFailure(['something else'], '/data/postgres', 'u')).toMatch(/read the lines above/);
  });
});

describe('an external Postgres (DATABASE_URL)', () => {
  const configFor = (workers: number, poolSize: number) =>
    parseConfig({ TESSERA_WORKERS: String(workers), TESSERA_DB_POOL_SIZE: String(poolSize) });

  it('keeps the pool when every worker’s fits, divides it when not, refuses when too few fit', async () => {
    const url = await createTestDatabase();
    const max = Number(await show(url, 'max_connections'));
    const reserved = Number(await show(url, 'superuser_reserved_connections'));
    expect(await servingPoolSize(configFor(1, 20), url)).toBe(20);
    // As many workers as leave each about 8 connections: the pool shrinks to fit, with a warning.
    const workers = Math.floor((max - reserved - 10) / 14);
    const shrunk = await servingPoolSize(configFor(workers, 20), url);
    expect(shrunk).toBeGreaterThanOrEqual(4);
    expect(shrunk).toBeLessThan(20);
    expect(workers * (shrunk + 6) + 10).toBeLessThanOrEqual(max - reserved);
    await expect(servingPoolSize(configFor(max, 20), url)).rejects.toThrow(ConnectionBudgetError);
    await expect(servingPoolSize(configFor(max, 20), url)).rejects.toThrow(/Fix: put pgbouncer/);
  });
});
