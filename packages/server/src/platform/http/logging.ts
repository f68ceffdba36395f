// pino options: secrets never reach a log. Known secret fields are redacted by path; as a second line,
// any run of 13–19 digits (a card number shape) in a logged string is masked.
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
      req: (req: { method: string; url: string; id: string }) => ({
        method: req.method,
        url: maskPans(req.url),
        id: req.id,
      }),
    },
  };
}
