// Webhook failures in the log, summarised per endpoint (docs/webhooks.md, Logs): the first failed
// attempt to an endpoint is logged with its error; the next ones within the window are counted, not
// logged one by one, and the next line about that endpoint says how many there were. An endpoint that
// answers again after failing says so once. A sandbox whose quick-start URLs point nowhere
// (shop.example) then logs a line a minute per endpoint, not one per attempt; every attempt is still in
// the delivery log, the metrics and the traces.

import type { Logger } from 'pino';

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

/**
 * A delivery failed for good or left waiting is always logged; a failed attempt to be retried is
 * summarised per endpoint (FailureLog above), so one endpoint that is down is a line a minute.
 */
export function logAttempt(
  logger: Logger,
  failureLog: FailureLog,
  claimed: { id: string; event_id: string; attempt_count: number; url: string },
  outcome: {
    isAcknowledged: boolean;
    isLast: boolean;
    waits: boolean;
    error: string | undefined;
    at: Date;
  },
): void {
  const endpoint = FailureLog.endpointOf(claimed.url);
  const line = failureLog.attempt(endpoint, !outcome.isAcknowledged, outcome.error, outcome.at.getTime());
  const facts = {
    deliveryId: claimed.id,
    eventId: claimed.event_id,
    attempt: claimed.attempt_count,
    endpoint,
  };
  if (outcome.isAcknowledged) {
    if (line.log === 'recovered')
      logger.info({ endpoint, failedBefore: line.failedBefore }, 'webhook endpoint answers again');
    return;
  }
  if (outcome.waits || outcome.isLast) {
    logger.info(
      { ...facts, error: outcome.error },
      outcome.waits
        ? 'webhook delivery waits for the endpoint to answer again'
        : 'webhook delivery failed for good',
    );
  } else if (line.log === 'failure') {
    logger.info(
      { ...facts, error: outcome.error, ...(line.alsoFailed > 0 ? { alsoFailed: line.alsoFailed } : {}) },
      line.alsoFailed > 0
        ? `webhook attempt failed; retry scheduled (and ${line.alsoFailed} more failed attempts to this endpoint in the last minute, not logged one by one)`
        : 'webhook attempt failed; retry scheduled (more failures of this endpoint within a minute are summarised)',
    );
  }
}
