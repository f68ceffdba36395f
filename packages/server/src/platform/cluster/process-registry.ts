// The processes sharing one database. Each registers itself with a heartbeat and holds one LISTEN
// connection for news from the others (a sandbox clock advance, say). A process that stops heartbeating
// for PROCESS_TTL_SECONDS counts as gone: a process killed without deregistering holds nobody up.
import { hostname } from 'node:os';
import { sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { newId } from '../ids.ts';

const HEARTBEAT_MS = 5000;
export const PROCESS_TTL_SECONDS = 15;

/** The newest tenant change number handed out (a change not yet committed included). */
export const CURRENT_TENANT_CHANGE = sql`SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM tenant_changes_seq`;

/** The notification channel of tenant changes (migration 0025's trigger). */
export const TENANTS_CHANNEL = 'tessera_tenants';

type Handler = (payload: string) => void | Promise<void>;

export class ProcessRegistry {
  readonly id = newId('process');
  private listener: pg.Client | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private readonly handlers = new Map<string, Handler>();
  private isStopped = false;
  private listening = false;

  constructor(
    private readonly db: Db,
    private readonly connectionString: string,
    private readonly logger: Logger,
  ) {}

  /** Tries again every second until connected (the database may take a while to come back). */
  private reconnectSoon(): void {
    setTimeout(() => {
      if (this.isStopped) return;
      this.connect().catch((err: Error) => {
        this.logger.warn({ reason: err.message }, 'notification connection: reconnect failed; retrying');
        this.reconnectSoon();
      });
    }, 1000).unref();
  }

  /** Subscribes to a channel (call before start); the handler also runs after every (re)connection. */
  on(channel: string, handler: Handler): void {
    this.handlers.set(channel, handler);
  }

  async start(): Promise<void> {
    const now = new Date();
    await this.db
      .insertInto('tessera_processes')
      .values({ id: this.id, pid: process.pid, host: hostname(), started_at: now, seen_at: now })
      .execute();
    await this.connect();
    this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Whether notifications reach this process now (its LISTEN connection is up). */
  get isListening(): boolean {
    return this.listening;
  }

  /**
   * Records the newest tenant change this process has heard of (migration 0025); `current` after a
   * (re)connection, when the caller has dropped everything it knew, so nothing older can matter.
   */
  async acknowledgeTenantChange(version: number | 'current'): Promise<void> {
    const heard = version === 'current' ? sql<string>`(${CURRENT_TENANT_CHANGE})` : sql<string>`${version}`;
    await this.db
      .updateTable('tessera_processes')
      .set({ tenants_version: sql<string>`greatest(tenants_version, ${heard})` })
      .where('id', '=', this.id)
      .execute();
  }

  /** Records what this process has seen (its sandbox clock offset). */
  async acknowledge(clockOffsetMs: number): Promise<void> {
    await this.db
      .updateTable('tessera_processes')
      .set({ clock_offset_ms: clockOffsetMs, seen_at: sql<Date>`now()` })
      .where('id', '=', this.id)
      .execute();
  }

  /** Live processes that have not yet seen this clock offset. */
  async countBehind(clockOffsetMs: number): Promise<number> {
    const row = await this.db
      .selectFrom('tessera_processes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('seen_at', '>', sql<Date>`now() - make_interval(secs => ${PROCESS_TTL_SECONDS})`)
      .where('clock_offset_ms', '<', String(clockOffsetMs))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    await this.listener?.end().catch(() => undefined);
    await this.db
      .deleteFrom('tessera_processes')
      .where('id', '=', this.id)
      .execute()
      .catch(() => undefined);
  }

  private async beat(): Promise<void> {
    try {
      await this.db
        .updateTable('tessera_processes')
        .set({ seen_at: sql<Date>`now()` })
        .where('id', '=', this.id)
        .execute();
      await this.db
        .deleteFrom('tessera_processes')
        .where('seen_at', '<', sql<Date>`now() - interval '1 hour'`)
        .execute();
    } catch (err) {
      this.logger.warn({ err }, 'process heartbeat failed');
    }
  }

  /** One dedicated connection LISTENs; it reconnects after a loss (a restart, a failover). */
  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.connectionString,
      application_name: 'tessera-listen',
      keepAlive: true,
    });
    client.on('error', () => undefined);
    client.on('end', () => {
      // A client that never finished connecting is its attempt's to retry.
      if (this.listener !== client) return;
      // Until it is back, news may be missed: what depends on it (the tenant cache) stops trusting itself.
      this.listener = undefined;
      this.listening = false;
      if (this.isStopped) return;
      this.logger.warn('notification connection lost; reconnecting');
      this.reconnectSoon();
    });
    client.on('notification', (message) => {
      const handler = this.handlers.get(message.channel);
      if (!handler) return;
      Promise.resolve(handler(message.payload ?? '')).catch((err) =>
        this.logger.error({ err, channel: message.channel }, 'notification handler failed'),
      );
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys())
        await client.query(`LISTEN ${client.escapeIdentifier(channel)}`);
    } catch (err) {
      client.end().catch(() => undefined);
      throw err;
    }
    this.listener = client;
    this.listening = true;
    // News sent while no connection listened is not replayed: handlers catch up from the database.
    for (const [channel, handler] of this.handlers) {
      Promise.resolve(handler('')).catch((err) =>
        this.logger.error({ err, channel }, 'notification handler failed'),
      );
    }
  }
}
