// A real local HTTP receiver that records every delivery and answers as the test scripts it: a status
// and body, a delay, a connection reset, or no answer at all. It can also serve a page (a merchant's shop
// page for browser tests) at a path.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  receivedAt: number;
}

export type ReceiverBehaviour =
  | { kind: 'answer'; status: number; body?: string; delayMs?: number }
  | { kind: 'reset' }
  | { kind: 'hang' };

export class WebhookReceiver {
  readonly received: ReceivedRequest[] = [];
  private readonly script: ReceiverBehaviour[] = [];
  private fallback: ReceiverBehaviour = { kind: 'answer', status: 200, body: 'OK' };
  private readonly events = new EventEmitter();
  private readonly sockets = new Set<Socket>();
  private readonly server: http.Server;
  private readonly pages = new Map<string, string>();

  private constructor() {
    this.server = http.createServer((req, res) => {
      const page = req.method === 'GET' ? this.pages.get(req.url ?? '') : undefined;
      if (page !== undefined) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const record = {
          path: req.url ?? '/',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        this.received.push(record);
        this.events.emit('request', record);
        const behaviour = this.script.shift() ?? this.fallback;
        if (behaviour.kind === 'reset') {
          req.socket.destroy();
          return;
        }
        if (behaviour.kind === 'hang') return;
        const answer = () =>
          res.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end(behaviour.body ?? '');
        if (behaviour.delayMs) setTimeout(answer, behaviour.delayMs);
        else answer();
      });
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** Serves this HTML to GET requests for the path (not recorded as deliveries). */
  serve(path: string, html: string): void {
    this.pages.set(path, html);
  }

  /** The next answers, in order; after them the fallback (default: 200 "OK"). */
  respondWith(...behaviours: ReceiverBehaviour[]): void {
    this.script.push(...behaviours);
  }

  setFallback(behaviour: ReceiverBehaviour): void {
    this.fallback = behaviour;
  }

  /** Resolves once `count` requests matching the predicate have arrived (no wall-time sleeping). */
  async waitFor(count: number, predicate: (r: ReceivedRequest) => boolean = () => true, timeoutMs = 10_000) {
    const matching = () => this.received.filter(predicate);
    if (matching().length >= count) return matching();
    return new Promise<ReceivedRequest[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.events.off('request', check);
        reject(new Error(`expected ${count} deliveries, got ${matching().length}`));
      }, timeoutMs);
      const check = () => {
        if (matching().length >= count) {
          clearTimeout(timer);
          this.events.off('request', check);
          resolve(matching());
        }
      };
      this.events.on('request', check);
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
