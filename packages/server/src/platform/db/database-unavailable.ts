// Whether an error means "no usable database right now" (a restart, a failover, a pooler repointing)
// rather than a fault of the request or of the code: such a request is answered 503 with Retry-After,
// and a client retries it (with its Idempotency-Key, a write is then done exactly once).

/** SQLSTATEs of a database that is going away, not there yet, or not (yet) the primary. */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: the server is stopping (or a failover tool stopped it)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, or recovering
  '25006', // read_only_sql_transaction: a standby, before its promotion
  '53300', // too_many_connections
  '08P01', // protocol_violation: how pgbouncer reports a server it cannot reach
]);

/** Socket errors of a connection that could not be made or was cut. */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/** node-postgres's own words for a lost or refused connection (these errors carry no code). */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable|Cannot use a pool after calling end)/;

export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code))
        return true;
    }
    if (typeof message === 'string' && UNAVAILABLE_MESSAGES.test(message)) return true;
  }
  return false;
}
