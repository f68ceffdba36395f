// The test harness: an app in-process on a real HTTP port, over its own cloned database, with clock
// control and an admin client. Tests speak HTTP to it as any client would.
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { type Config, parseConfig } from '../../src/config.ts';
import { SandboxClock } from '../../src/platform/clock/clock.ts';
import type { StatementObserver } from '../../src/platform/db/connection-scope.ts';
import { createApp, type TesseraApp } from '../../src/server.ts';
import { cachedDocumentsOf } from './document-cache.ts';
import { DocumentCheck, type Exchange } from './document-check.ts';
import { createTestDatabase } from './test-database.ts';

const KEYED_RUN = process.env.TESSERA_TEST_KEYED === '1';

export interface HarnessOptions {
  env?: Record<string, string>;
  /** Collect log lines (to prove what never reaches a log) */
  captureLogs?: boolean;
  /** Fault injection: sees every statement of the app's pool before it is sent */
  observeStatement?: StatementObserver;
  /** false: every order and authorization the general way (see AppOptions) */
  oneStatementWrites?: boolean;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  json?: unknown;
  form?: Record<string, string>;
  body?: string;
}

/**
 * The time of a test that starts a Harness of its own (another configuration): it does in its body what a
 * file does in its hooks (a database cloned, every service built), so it gets the hooks' time, not a test's
 * 30 s: on a loaded two-core machine those tests ran out of time with nothing wrong.
 */
export const OWN_HARNESS_TIMEOUT_MS = 120_000;

export class Harness {
  /** Every exchange of request(), held to the documents at close() */
  private readonly exchanges: Exchange[] = [];
  /** The settings the running app was built with beyond the harness's own: its documents depend on them */
  private settings: Record<string, string>;

  private constructor(
    readonly logs: string[],
    public tessera: TesseraApp,
    public config: Config,
    readonly baseUrl: string,
    readonly adminToken: string,
    readonly databaseUrl: string,
    /** What built the app, to build it again on a restart (with settings changed, as an operator would) */
    private readonly build: (
      clock: SandboxClock | undefined,
      env?: Record<string, string>,
    ) => Promise<{
      tessera: TesseraApp;
      config: Config;
    }>,
    private readonly frozenAt: Date,
    /** The settings it was started with beyond the harness's own */
    private readonly startSettings: Record<string, string>,
  ) {
    this.settings = startSettings;
  }

  static async start(options: HarnessOptions = {}): Promise<Harness> {
    const databaseUrl = await createTestDatabase();
    // Hosted pages hand out absolute URLs, so the port is chosen before the app is built.
    const port = await freePort();
    const configWith = (changed: Record<string, string> = {}) =>
      parseConfig({
        LOG_LEVEL: options.captureLogs ? 'info' : 'silent',
        PORT: String(port),
        TESSERA_PUBLIC_URL: `http://127.0.0.1:${port}`,
        ...options.env,
        ...changed,
      });
    const config = configWith();
    const adminToken = `adm_test_${randomBytes(16).toString('hex')}`;
    const encryptionKey = randomBytes(32);
    const logs: string[] = [];
    const frozenAt = new Date();
    const build = async (clock: SandboxClock | undefined, changed?: Record<string, string>) => {
      const config = configWith(changed);
      const tessera = await createApp({
        ...(clock ? { clock } : {}),
        config,
        databaseUrl,
        adminToken,
        encryptionKey,
        runBackgroundSweeps: false,
        ...(options.observeStatement ? { observeStatement: options.observeStatement } : {}),
        ...(options.oneStatementWrites !== undefined
          ? { oneStatementWrites: options.oneStatementWrites }
          : {}),
        logStream: new Writable({
          write(chunk, _encoding, callback) {
            logs.push(String(chunk));
            callback();
          },
        }),
      });
      await tessera.app.listen({ port: config.port, host: '127.0.0.1' });
      return { tessera, config };
    };
    // Tests own time: a frozen sandbox clock moves only through advanceClock (production mode keeps real time).
    const { tessera } = await build(
      config.mode === 'sandbox' ? new SandboxClock(0, { frozenAt }) : undefined,
    );
    const address = `http://127.0.0.1:${config.port}`;
    return new Harness(logs, tessera, config, address, adminToken, databaseUrl, build, frozenAt, {
      ...options.env,
    });
  }

  /**
   * Stops the app and starts a new one on the same database, port and keys, at the same sandbox time;
   * `env` changes settings for the new one, as an operator's restart would.
   */
  async restart(env?: Record<string, string>): Promise<void> {
    const clock = this.tessera.services.clock;
    await this.tessera.close();
    const { tessera, config } = await this.build(
      clock instanceof SandboxClock ? new SandboxClock(clock.offset, { frozenAt: this.frozenAt }) : undefined,
      env,
    );
    this.tessera = tessera;
    this.config = config;
    this.settings = { ...this.startSettings, ...env };
  }

  get services() {
    return this.tessera.services;
  }

  async request<T = unknown>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    // The keyed run of the suite (vitest project "keyed") sends every write as a unit of work, but for
    // the routes that move the sandbox clock, which refuse a key.
    if (
      KEYED_RUN &&
      method !== 'GET' &&
      path !== '/sandbox/clock/advance' &&
      path !== '/admin/payout-runs' &&
      !path.startsWith('/sandbox/triggers/') &&
      !Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key')
    ) {
      headers['idempotency-key'] = `auto-${randomBytes(12).toString('hex')}`;
    }
    let body: string | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] ??= 'application/json';
    } else if (options.form !== undefined) {
      body = new URLSearchParams(options.form).toString();
      headers['content-type'] ??= 'application/x-www-form-urlencoded';
    }
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: the text is the body
    }
    this.exchanges.push({ method, path, status: response.status, headers: response.headers, text });
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  /** An admin API call with the operator token. */
  admin<T = unknown>(method: string, path: string, options: RequestOptions = {}) {
    return this.request<T>(method, `/admin${path}`, {
      ...options,
      headers: { authorization: `Bearer ${this.adminToken}`, ...options.headers },
    });
  }

  /** Advances the sandbox clock through the public route, so every due sweep runs before it answers. */
  async advanceClock(seconds: number): Promise<{ now: string; processed: Record<string, number> }> {
    const response = await this.request<{ now: string; processed: Record<string, number> }>(
      'POST',
      '/sandbox/clock/advance',
      {
        headers: { authorization: `Bearer ${this.adminToken}` },
        json: { seconds },
      },
    );
    if (response.status !== 200) throw new Error(`clock advance failed: ${response.text}`);
    return response.body;
  }

  /**
   * Holds the file's exchanges to the documents, then stops the app; fails with every exchange no
   * document describes (TESSERA_DOCUMENT_PROBLEMS=file: appends them to the file instead).
   */
  async close(): Promise<void> {
    let problems: string[] = [];
    if (this.exchanges.length > 0) {
      const check = new DocumentCheck(await cachedDocumentsOf(this.baseUrl, this.settings));
      problems = [...new Set(this.exchanges.flatMap((exchange) => check.problemsOf(exchange)))];
    }
    await this.tessera.close();
    const file = process.env.TESSERA_DOCUMENT_PROBLEMS;
    if (file) {
      for (const problem of problems) appendFileSync(file, `${problem}\n`);
    } else if (problems.length > 0) {
      throw new Error(`exchanges the OpenAPI documents do not describe:\n${problems.join('\n')}`);
    }
  }
}

/** Polls until the check passes: for work that completes asynchronously (a queued job), not for time. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
