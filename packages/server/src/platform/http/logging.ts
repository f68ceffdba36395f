// pino options: secrets never reach a log. Known secret fields are redacted by path; as a second line,
// any run of 13–19 digits (a card number shape) in a logged string is masked. Request URLs are logged
// as their route, with the parameters that are credentials (hosted-page tokens, link hashes, KYC
// sessions) and every query value redacted.
import type { LoggerOptions } from 'pino';

const SECRET_FIELDS = [
  'password',
  'cardNumber',
  'cardCvv',
  'cvv',
  'pan',
  'apiKey',
  'token',
  'accessToken',
  'refreshToken',
  'sessionToken',
  'clientSecret',
  'client_secret',
  'webhookSigningKey',
  'webhookSecret',
  'ipnSecret',
  'secret',
  'networkToken',
];

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-partner-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  ...SECRET_FIELDS.flatMap((f) => [f, `*.${f}`]),
];

const PAN_LIKE = /\b\d{13,19}\b/g;

export function maskPans(text: string): string {
  return text.replace(
    PAN_LIKE,
    (digits) => `${digits.slice(0, 6)}${'*'.repeat(digits.length - 10)}${digits.slice(-4)}`,
  );
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: {
      logMethod(args, method) {
        method.apply(
          this,
          args.map((arg) => (typeof arg === 'string' ? maskPans(arg) : arg)) as Parameters<typeof method>,
        );
      },
    },
    serializers: {
      err: (err: Error) => ({
        type: err.name,
        message: maskPans(err.message),
        stack: err.stack && maskPans(err.stack),
      }),
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: loggedUrl(req),
        id: req.id,
      }),
    },
  };
}

interface LoggedRequest {
  method: string;
  url: string;
  id: string;
  params?: unknown;
  routeOptions?: { url?: string | undefined };
}

/** Route parameters whose values are credentials: whoever holds one can act on the page or link. */
const SECRET_PARAM = /token|hash|secret|key|session|code|password/i;
/** Outside a known route, path segments long enough to be a token */
const LONG_SEGMENT = /^[^/]{16,}$/;

export function loggedUrl(req: LoggedRequest): string {
  const [rawPath = '', query] = req.url.split('?', 2);
  const pattern = req.routeOptions?.url;
  const params = (req.params ?? {}) as Record<string, unknown>;
  const path = pattern
    ? pattern.replace(/:(\w+)/g, (_, name: string) =>
        SECRET_PARAM.test(name) ? '[redacted]' : encodeURIComponent(String(params[name] ?? '')),
      )
    : rawPath
        .split('/')
        .map((segment) => (LONG_SEGMENT.test(segment) ? '[redacted]' : segment))
        .join('/');
  const redactedQuery = query
    ?.split('&')
    .map((pair) => `${pair.split('=', 1)[0]}=[redacted]`)
    .join('&');
  return maskPans(redactedQuery ? `${path}?${redactedQuery}` : path);
}
