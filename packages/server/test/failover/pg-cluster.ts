// A highly available Postgres as operators run it, from Debian's packages: a primary with a synchronous
// standby (pg_basebackup -R), pgbouncer in front in session mode. The failover test kills the primary,
// promotes the standby and repoints pgbouncer, as Patroni or pg_auto_failover would.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chown, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const PG_BIN = process.env.TESSERA_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const PGBOUNCER = process.env.TESSERA_PGBOUNCER ?? '/usr/sbin/pgbouncer';
const isRoot = process.getuid?.() === 0;

/** Postgres and pgbouncer refuse to run as root: as root, they run as the `postgres` user. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

async function exec(command: string, args: string[]): Promise<string> {
  const [cmd, argv] = asServerUser(command, args);
  const { stdout } = await run(cmd, argv, { maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function haveHaTools(): Promise<boolean> {
  try {
    await run(join(PG_BIN, 'postgres'), ['--version']);
    await run(PGBOUNCER, ['--version']);
    return true;
  } catch {
    return false;
  }
}

interface Node {
  name: string;
  dir: string;
  port: number;
}

export class HaCluster {
  private bouncer: ChildProcess | undefined;
  primary: Node;
  standby: Node;

  private constructor(
    private readonly root: string,
    primary: Node,
    standby: Node,
    readonly bouncerPort: number,
  ) {
    this.primary = primary;
    this.standby = standby;
  }

  /** The URL Tessera is given: pgbouncer's. */
  get databaseUrl(): string {
    return `postgres://postgres@127.0.0.1:${this.bouncerPort}/tessera`;
  }

  /** A direct connection to a node (what the test checks afterwards). */
  nodeUrl(node: Node, database = 'tessera'): string {
    return `postgres://postgres@127.0.0.1:${node.port}/${database}`;
  }

  static async start(): Promise<HaCluster> {
    const root = await mkdtemp(join(tmpdir(), 'tessera-ha-'));
    if (isRoot) {
      const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
      const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
      await chown(root, uid, gid);
    }
    const primary = { name: 'primary', dir: join(root, 'primary'), port: await freePort() };
    const standby = { name: 'standby1', dir: join(root, 'standby'), port: await freePort() };
    const cluster = new HaCluster(root, primary, standby, await freePort());

    try {
      await cluster.build();
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  private async build(): Promise<void> {
    const { primary, standby } = this;
    await exec(join(PG_BIN, 'initdb'), ['-D', primary.dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
    await this.configure(primary, [
      "wal_level = 'replica'",
      'max_wal_senders = 5',
      'synchronous_commit = on',
    ]);
    await this.startNode(primary);
    await this.sql(primary, 'CREATE DATABASE tessera');

    await exec(join(PG_BIN, 'pg_basebackup'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      standby.dir,
      '-R',
      '-X',
      'stream',
      // Its checkpoint at once, not spread over minutes.
      '-c',
      'fast',
    ]);
    await this.configure(standby, [
      `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=standby1'`,
    ]);
    await this.startNode(standby);
    // From now on every commit waits for the standby to have it: an acknowledged write survives the primary.
    await this.sql(primary, "ALTER SYSTEM SET synchronous_standby_names = 'standby1'");
    await this.sql(primary, 'SELECT pg_reload_conf()');
    await this.waitFor(
      primary,
      "SELECT 1 FROM pg_stat_replication WHERE application_name = 'standby1' AND sync_state = 'sync'",
    );

    await this.writeBouncerConfig(primary);
    await this.startBouncer();
  }

  /** One statement on a node's postgres database. */
  private async sql(node: Node, statement: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.nodeUrl(node, 'postgres') });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  }

  /** Appends settings to a node's configuration (port and socket directory included). */
  private async configure(node: Node, settings: string[]): Promise<void> {
    const file = join(node.dir, 'postgresql.auto.conf');
    const current = await readFile(file, 'utf8').catch(() => '');
    const lines = [
      `port = ${node.port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${this.root}'`,
      `cluster_name = '${node.name}'`,
      ...settings,
    ];
    await writeFile(file, `${current}\n${lines.join('\n')}\n`);
    // Written by root when the tests run as root: the server's user must own it.
    if (isRoot) await run('chown', ['postgres:postgres', file]);
  }

  private async startNode(node: Node): Promise<void> {
    await exec(join(PG_BIN, 'pg_ctl'), [
      '-D',
      node.dir,
      '-l',
      join(this.root, `${node.name}.log`),
      '-w',
      'start',
    ]);
  }

  /** Polls a node until the query returns a row (up to 30 s). */
  async waitFor(node: Node, query: string, database = 'postgres'): Promise<void> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const client = new pg.Client({ connectionString: this.nodeUrl(node, database) });
      try {
        await client.connect();
        if ((await client.query(query)).rowCount) return;
      } catch {
        // not up yet
      } finally {
        await client.end().catch(() => undefined);
      }
      if (Date.now() > deadline) throw new Error(`${node.name}: gave up waiting for ${query}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private async writeBouncerConfig(target: Node): Promise<void> {
    const ini = [
      '[databases]',
      `tessera = host=127.0.0.1 port=${target.port} dbname=tessera`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${this.bouncerPort}`,
      `unix_socket_dir = ${this.root}`,
      'auth_type = trust',
      `auth_file = ${join(this.root, 'userlist.txt')}`,
      'admin_users = postgres',
      // Session mode: Tessera holds LISTEN, advisory locks and named prepared statements on a connection.
      'pool_mode = session',
      'max_client_conn = 400',
      'default_pool_size = 100',
      // While no server can be reached, a client waits at most this long, then gets an error (a 503).
      'query_wait_timeout = 5',
      'server_connect_timeout = 2',
      'server_login_retry = 1',
      `logfile = ${join(this.root, 'pgbouncer.log')}`,
    ];
    await writeFile(join(this.root, 'userlist.txt'), '"postgres" ""\n');
    await writeFile(join(this.root, 'pgbouncer.ini'), `${ini.join('\n')}\n`);
    if (isRoot)
      await run('chown', [
        'postgres:postgres',
        join(this.root, 'userlist.txt'),
        join(this.root, 'pgbouncer.ini'),
      ]);
  }

  private async startBouncer(): Promise<void> {
    // pgbouncer drops root itself (-u), so the process we hold is pgbouncer's own.
    const user = isRoot ? ['-u', 'postgres'] : [];
    this.bouncer = spawn(PGBOUNCER, [...user, join(this.root, 'pgbouncer.ini')], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const client = new pg.Client({
        connectionString: `postgres://postgres@127.0.0.1:${this.bouncerPort}/pgbouncer`,
      });
      try {
        await client.connect();
        await client.query('SHOW VERSION');
        return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 100));
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  /** The primary's machine dies: the postmaster and every backend at once (kill -9 of its session). */
  async killPrimary(): Promise<void> {
    const pid = Number((await readFile(join(this.primary.dir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
    // pg_ctl starts the postmaster in its own session: the negative pid is its whole process group.
    process.kill(-pid, 'SIGKILL');
  }

  /**
   * The failover: the standby is promoted, stops waiting for a synchronous standby it no longer has,
   * and pgbouncer is repointed at it (RELOAD). Answers how long it took.
   */
  async failOver(): Promise<number> {
    const started = Date.now();
    await exec(join(PG_BIN, 'pg_ctl'), ['-D', this.standby.dir, '-w', 'promote']);
    await this.sql(this.standby, "ALTER SYSTEM SET synchronous_standby_names = ''");
    await this.sql(this.standby, 'SELECT pg_reload_conf()');
    await this.writeBouncerConfig(this.standby);
    const console = new pg.Client({
      connectionString: `postgres://postgres@127.0.0.1:${this.bouncerPort}/pgbouncer`,
    });
    await console.connect();
    await console.query('RELOAD');
    await console.end();
    [this.primary, this.standby] = [this.standby, this.primary];
    return Date.now() - started;
  }

  async stop(): Promise<void> {
    this.bouncer?.kill('SIGTERM');
    for (const node of [this.primary, this.standby]) {
      await exec(join(PG_BIN, 'pg_ctl'), ['-D', node.dir, '-m', 'immediate', 'stop']).catch(() => undefined);
    }
    await rm(this.root, { recursive: true, force: true });
  }
}
