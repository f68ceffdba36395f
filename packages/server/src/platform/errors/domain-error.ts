// One error type with a closed set of codes; each API maps them to its own envelope exactly once.

export const ERROR_STATUS = {
  validation_failed: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  invalid_state: 409,
  conflict: 409,
  idempotency_mismatch: 422,
  idempotency_in_progress: 409,
  idempotency_key_expired: 422,
  limit_exceeded: 422,
  payment_declined: 402,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  rate_limited: 429,
  headers_too_large: 431,
  rail_unavailable: 503,
  database_unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface DomainErrorOptions {
  /** The request field that caused the error, in the API's own naming */
  field?: string;
  /** Extra machine-readable facts (current status, limit values…) */
  details?: Record<string, unknown>;
  /** Seconds a client should wait before retrying (rate limits, a database failing over) */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly field: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    options: DomainErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.field = options.field;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

export const validationFailed = (field: string, message: string) =>
  new DomainError('validation_failed', message, { field });
export const notFound = (what: string) => new DomainError('not_found', `${what} not found`);
export const invalidState = (message: string, details?: Record<string, unknown>) =>
  new DomainError('invalid_state', message, details ? { details } : {});
