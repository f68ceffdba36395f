// pino options: secrets never reach a log. Known secret fields are redacted by path; as a second line,
// any run of 13–19 digits (a card number shape) in a logged string is masked. Request URLs are logged
// as their route, with the parameters that are credentials (hosted-page tokens, link hashes, KYC
// sessions) redacted, and the query values whose names say credential or personal data.

import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { DestinationStream, LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import { traceIds } from '../observability/tracing.ts';

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

/**
 * Where log lines go: JSON lines (what a log collector reads), or on a terminal one readable line per
 * entry — time, level, message, then the entry's fields — for the person watching it
 * (TESSERA_LOG_FORMAT: auto, json, pretty).
 */
export function logDestination(
  format: 'auto' | 'json' | 'pretty',
  stdout: NodeJS.WriteStream | DestinationStream = process.stdout,
): DestinationStream {
  const isTerminal = 'isTTY' in stdout && stdout.isTTY === true;
  if (format === 'json' || (format === 'auto' && !isTerminal)) return stdout;
  return pretty({
    destination: stdout,
    singleLine: true,
    colorize: isTerminal,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    sync: true,
  });
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    // Every line written inside a traced span names its trace (docs/operations.md, Traces).
    mixin: traceIds,
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
/** Query parameters whose values are credentials or personal data */
const SECRET_QUERY =
  /token|hash|secret|key|session|code|password|signature|email|phone|name|address|iban|^q$|^query$|^search$/i;
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
  // Query values are kept (a page, a language, a status filter help whoever reads the log) unless their
  // name says they are a credential or personal data.
  const redactedQuery = query
    ?.split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0] ?? '';
      return SECRET_QUERY.test(decodeURIComponentSafe(name)) ? `${name}=[redacted]` : pair.slice(0, 200);
    })
    .join('&');
  return maskPans(redactedQuery ? `${path}?${redactedQuery}` : path);
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * One line per request at `info`, written when it is answered: method, route, the logged URL, status,
 * duration (the request id is the line's `reqId`). Fastify's "incoming request" line goes to `debug`.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      url: loggedUrl(request),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 10) / 10,
      // The request's span has ended by now: its ids were kept on the request.
      ...request.traceIds,
    };
    if (error) request.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request');
  }
}
