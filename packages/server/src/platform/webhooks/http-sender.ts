// One outbound POST with an overall deadline (connect + response), through the SSRF guard.
// Network errors, resets and timeouts come back as values: the engine decides what to retry.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { SsrfGuard } from './ssrf-guard.ts';

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface OutboundResult {
  /** Cut short because Tessera is shutting down: no verdict on the receiver */
  isAbandoned?: boolean;
  statusCode: number | undefined;
  /** The response body, at most 64 KiB of it */
  body: string;
  error: string | undefined;
  durationMs: number;
}

const MAX_BODY = 64 * 1024;

export class HttpSender {
  private readonly inFlight = new Set<AbortController>();
  private isAbandoning = false;

  constructor(
    private readonly guard: SsrfGuard,
    private readonly timeoutMs: number,
  ) {}

  /** Cuts every request in flight short and refuses new ones (shutdown). */
  abandonAll(): void {
    this.isAbandoning = true;
    for (const controller of this.inFlight) controller.abort();
  }

  async post(request: OutboundRequest): Promise<OutboundResult> {
    const started = performance.now();
    const done = (
      statusCode: number | undefined,
      body: string,
      error: string | undefined,
    ): OutboundResult => ({
      statusCode,
      body,
      error,
      durationMs: Math.round(performance.now() - started),
    });
    if (this.isAbandoning)
      return { ...done(undefined, '', 'abandoned: Tessera is shutting down'), isAbandoned: true };
    const refused = this.guard.checkUrl(request.url);
    if (refused) return done(undefined, '', `refused: the URL ${refused}`);
    const url = new URL(request.url);
    const lookup = this.guardedLookup(url.hostname);
    return new Promise<OutboundResult>((resolve) => {
      const controller = new AbortController();
      this.inFlight.add(controller);
      const timer = setTimeout(() => controller.abort(), this.timeoutMs);
      const finish = (result: OutboundResult) => {
        clearTimeout(timer);
        this.inFlight.delete(controller);
        resolve(
          this.isAbandoning && result.error
            ? { ...result, error: 'abandoned: Tessera shut down before an answer', isAbandoned: true }
            : result,
        );
      };
      const client = url.protocol === 'https:' ? https : http;
      const req = client.request(
        url,
        {
          method: 'POST',
          headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body).toString() },
          lookup,
          signal: controller.signal,
          agent: false,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            if (size < MAX_BODY) chunks.push(chunk);
            size += chunk.length;
          });
          res.on('end', () =>
            finish(
              done(res.statusCode, Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY), undefined),
            ),
          );
          res.on('error', (err) =>
            finish(done(res.statusCode, '', describe(err, controller.signal.aborted, this.timeoutMs))),
          );
        },
      );
      req.on('error', (err) =>
        finish(done(undefined, '', describe(err, controller.signal.aborted, this.timeoutMs))),
      );
      req.end(request.body);
    });
  }

  private guardedLookup(hostname: string): LookupFunction {
    return (host, options, callback) => {
      dnsLookup(host, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
        if (err) return callback(err, '', 0);
        const blocked = addresses.map((a) => this.guard.checkAddress(a.address, hostname)).find(Boolean);
        if (blocked)
          return callback(Object.assign(new Error(`refused: the host ${blocked}`), { code: 'ESSRF' }), '', 0);
        if (options.all)
          return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0];
        if (!first) return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '', 0);
        callback(null, first.address, first.family);
      });
    };
  }
}

function describe(err: Error, isTimeout: boolean, timeoutMs: number): string {
  if (isTimeout) return `timeout: no complete answer within ${timeoutMs} ms`;
  const code = (err as NodeJS.ErrnoException).code;
  return code ? `${code}: ${err.message}` : err.message;
}
