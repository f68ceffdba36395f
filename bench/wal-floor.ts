// The write-ahead log a write's records cost whatever is in them (issue 54; docs/benchmarks.md, "The
// floor under a card authorization's WAL"). Each shape in bench/wal-floor/ is a schema and one operation in
// SQL: a card authorization's rows as the product writes them today, the same with every key a bigint, and
// the same with the fewest records that keep every read. The operation runs OPERATIONS times, each in a
// transaction of its own as a request's is, the delta rows rolled up every 100; then the WAL between is
// read back with pg_walinspect, by record type. Bytes, not times: the figures do not depend on the machine.
//
//   npm run bench:wal-floor               every shape
//   WAL_FLOOR_ONLY=today,records npm run bench:wal-floor
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  ensureDatabase,
  startEmbeddedPostgres,
} from '../packages/server/src/platform/db/embedded-postgres.ts';
import { WAL_BY_RECORD_TYPE, type WalRecordType } from './table-writes.ts';

const SHAPES = fileURLToPath(new URL('./wal-floor/', import.meta.url));
const OPERATIONS = Number(process.env.WAL_FLOOR_OPERATIONS ?? 3000);
const WARMUP = 300;
const ORDER = ['records', 'today', 'bigint-keys', 'fewest-records'];
/** Operations between two rollups of the delta rows, as the ledger's sweep folds them in batches */
const ROLLUP_EVERY = 100;

interface Shape {
  name: string;
  schema: string;
  operation: string;
  rollup?: string;
}

/** A shape's file: its sections after `-- schema`, `-- operation` and `-- rollup` */
function parseShape(name: string, text: string): Shape {
  const section = (title: string) => {
    const start = text.indexOf(`-- ${title}\n`);
    if (start < 0) return undefined;
    const body = text.slice(start + title.length + 4);
    const next = body.search(/^-- (schema|operation|rollup)\n/m);
    return next < 0 ? body : body.slice(0, next);
  };
  const schema = section('schema');
  const operation = section('operation');
  if (!schema || !operation) throw new Error(`${name}: a shape needs a schema and an operation`);
  return { name, schema, operation, rollup: section('rollup') };
}

interface RecordType {
  type: string;
  count: number;
  bytes: number;
  fpi: number;
}

async function measure(client: pg.Client, shape: Shape): Promise<{ total: number; types: RecordType[] }> {
  const schema = `floor_${shape.name.replace(/\W/g, '_')}`;
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  await client.query(`SET search_path = ${schema}, public`);
  await client.query(shape.schema);
  // :n, a bounded account's number (1-50): the cardholders' accounts an operation takes turns on (a cast's
  // `::numeric` is not it)
  const run = (i: number) =>
    client.query(`BEGIN; ${shape.operation.replace(/(?<!:):n\b/g, String(1 + (i % 50)))}; COMMIT`);
  const position = async () =>
    (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn;
  const rollup = () => (shape.rollup ? client.query(shape.rollup) : Promise.resolve());
  for (let i = 0; i < WARMUP; i++) await run(i);
  await rollup();
  // The first change to each page after a checkpoint logs the page whole: one checkpoint first, none after
  // (the cluster's checkpoint_timeout is longer than a run), so the images are those of the run's own pages.
  await client.query('CHECKPOINT');
  const start = await position();
  for (let i = 0; i < OPERATIONS; i++) {
    await run(i);
    if ((i + 1) % ROLLUP_EVERY === 0) await rollup();
  }
  const end = await position();
  const { rows } = await client.query<WalRecordType>(WAL_BY_RECORD_TYPE, [start, end]);
  const total = (
    await client.query<{ bytes: string }>('SELECT pg_wal_lsn_diff($2::pg_lsn, $1::pg_lsn)::text AS bytes', [
      start,
      end,
    ])
  ).rows[0]?.bytes;
  await client.query(`RESET search_path; DROP SCHEMA ${schema} CASCADE`);
  return {
    total: Number(total) / OPERATIONS,
    types: rows.map((r) => ({
      type: r.type,
      count: Number(r.records) / OPERATIONS,
      bytes: Number(r.bytes) / OPERATIONS,
      fpi: Number(r.fpi) / OPERATIONS,
    })),
  };
}

async function main() {
  const only = process.env.WAL_FLOOR_ONLY?.split(',');
  const names = (await readdir(SHAPES))
    .filter((f) => f.endsWith('.sql'))
    .map((f) => f.slice(0, -'.sql'.length));
  // The smallest records first, then today's shape and the shapes changed from it, in the order they change
  const rank = (name: string) => (ORDER.includes(name) ? ORDER.indexOf(name) : ORDER.length);
  const shapes = await Promise.all(
    names
      .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
      .filter((name) => !only || only.includes(name))
      .map(async (name) => parseShape(name, await readFile(join(SHAPES, `${name}.sql`), 'utf8'))),
  );
  const directory = await mkdtemp(join(tmpdir(), 'tessera-wal-floor-'));
  await chmod(directory, 0o755);
  const server = await startEmbeddedPostgres({
    directory: join(directory, 'data'),
    password: randomBytes(12).toString('hex'),
    postgresFlags: ['-c', 'checkpoint_timeout=1h', '-c', 'max_wal_size=8GB', '-c', 'autovacuum=off'],
  });
  const db = new pg.Client(server.connectionString('wal_floor'));
  try {
    await ensureDatabase(server.connectionString('postgres'), 'wal_floor');
    await db.connect();
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const version = (await db.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]
      ?.v;
    process.stdout.write(`WAL per operation, ${OPERATIONS} operations a shape (PostgreSQL ${version})\n\n`);
    for (const shape of shapes) {
      const { total, types } = await measure(db, shape);
      const records = types.reduce((sum, t) => sum + t.count, 0);
      process.stdout.write(`${shape.name}: ${Math.round(total)} B in ${records.toFixed(1)} records\n`);
      for (const t of types.filter((x) => x.bytes >= 1))
        process.stdout.write(
          `    ${t.type.padEnd(28)} ×${t.count.toFixed(2).padStart(6)} ${Math.round(t.bytes).toString().padStart(6)} B` +
            `${t.fpi >= 1 ? ` (FPI ${Math.round(t.fpi)})` : ''}  ${Math.round(t.bytes / t.count)} B each\n`,
        );
    }
  } finally {
    await db.end().catch(() => {});
    await server.stop();
    await rm(directory, { recursive: true, force: true });
  }
}

await main();
