// The HTTP behaviour every client shares: each write carries an Idempotency-Key (made once per call, so
// every retry of it is the same request to the server, which runs it at most once), and a call that
// meets a network failure, a 429 or a 5xx is retried with exponential backoff (honouring Retry-After).
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'openapi-fetch';

export interface TransportOptions {
  /** How many times a failed call is tried again (default 3; 0 for none) */
  retries?: number;
  /** The first backoff in ms, doubled each time, with jitter (default 250) */
  backoffMs?: number;
  /** A fetch to use instead of the global one */
  fetch?: typeof fetch;
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const RETRIED = new Set([429, 500, 502, 503, 504]);

/** Adds an Idempotency-Key to every write that has none. */
export const idempotencyKeys: Middleware = {
  onRequest({ request }) {
    if (WRITES.has(request.method) && !request.headers.has('idempotency-key')) {
      request.headers.set('idempotency-key', randomUUID());
    }
    return request;
  },
};

/** A fetch that tries again on network failures, 429 and 5xx answers. */
export function retryingFetch(options: TransportOptions = {}): (request: Request) => Promise<Response> {
  const retries = options.retries ?? 3;
  const backoff = options.backoffMs ?? 250;
  const send = options.fetch ?? fetch;
  return async (request: Request) => {
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= retries;
      try {
        const response = await send(last ? request : request.clone());
        if (last || !RETRIED.has(response.status)) return response;
        await pause(delayOf(response, backoff, attempt));
      } catch (err) {
        if (last) throw err;
        await pause(backoff * 2 ** attempt * (0.5 + Math.random()));
      }
    }
  };
}

function delayOf(response: Response, backoff: number, attempt: number): number {
  const retryAfter = Number(response.headers.get('retry-after'));
  if (Number.isFinite(retryAfter) && retryAfter > 0) return Math.min(retryAfter, 60) * 1000;
  return backoff * 2 ** attempt * (0.5 + Math.random());
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
