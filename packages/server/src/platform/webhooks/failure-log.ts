// Webhook failures in the log, summarised per endpoint (docs/webhooks.md, Logs): the first failed
// attempt to an endpoint is logged with its error; the next ones within the window are counted, not
// logged one by one, and the next line about that endpoint says how many there were. An endpoint that
// answers again after failing says so once. A sandbox whose quick-start URLs point nowhere
// (shop.example) then logs a line a minute per endpoint, not one per attempt; every attempt is still in
// the delivery log, the metrics and the traces.

/** The window an endpoint's failures are summarised over (on the injected clock). */
export const FAILURE_LOG_WINDOW_MS = 60_000;
/** Endpoints remembered at most (the oldest forgotten first): a bound on memory, not on correctness. */
const MAX_ENDPOINTS = 1000;

interface Endpoint {
  windowStart: number;
  /** Failures since the last line logged about it */
  unlogged: number;
  lastError: string | undefined;
}

export type FailureLogLine =
  | { log: 'failure'; alsoFailed: number }
  | { log: 'recovered'; failedBefore: number }
  | { log: 'nothing' };

export class FailureLog {
  private readonly endpoints = new Map<string, Endpoint>();

  /** The endpoint of a URL as a summary names it: scheme, host and path, never the query. */
  static endpointOf(url: string): string {
    try {
      const u = new URL(url);
      return `${u.protocol}//${u.host}${u.pathname}`;
    } catch {
      return 'an invalid URL';
    }
  }

  /** An attempt's outcome: whether to log it, and what to say of the ones not logged. */
  attempt(endpoint: string, failed: boolean, error: string | undefined, nowMs: number): FailureLogLine {
    const known = this.endpoints.get(endpoint);
    if (!failed) {
      if (!known) return { log: 'nothing' };
      this.endpoints.delete(endpoint);
      return { log: 'recovered', failedBefore: known.unlogged };
    }
    if (known && nowMs - known.windowStart < FAILURE_LOG_WINDOW_MS) {
      known.unlogged++;
      known.lastError = error;
      return { log: 'nothing' };
    }
    const alsoFailed = known?.unlogged ?? 0;
    this.endpoints.delete(endpoint);
    this.endpoints.set(endpoint, { windowStart: nowMs, unlogged: 0, lastError: error });
    if (this.endpoints.size > MAX_ENDPOINTS) {
      const oldest = this.endpoints.keys().next().value;
      if (oldest !== undefined) this.endpoints.delete(oldest);
    }
    return { log: 'failure', alsoFailed };
  }
}
