// The HTTP edge: what happens to a request before any route sees it. Every answer under an API's base
// path is in that API's error envelope, also for what the framework or Node's parser refuse (a bad
// percent-escape, a URL or headers too large); and strings that Postgres cannot store (NUL, lone
// UTF-16 surrogates) are refused once, here, naming the field, before anything is written.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../errors/domain-error.ts';
import { newId } from '../ids.ts';
import { type ErrorPresenter, presentError } from './api-scope.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan, tooDeep } from './client-json.ts';

/** Longer URLs are answered 414 (Node itself refuses request heads over 16 KiB, as 431). */
export const MAX_URL_LENGTH = 8192;

export interface ScopePresenters {
  /** Base path → the API's presenter, longest first */
  scopes: { prefix: string; presenter: ErrorPresenter }[];
  fallback: ErrorPresenter;
}

export function presenterFor(url: string, presenters: ScopePresenters): ErrorPresenter {
  const path = url.split('?')[0] ?? '';
  const scope = presenters.scopes.find((s) => path === s.prefix || path.startsWith(`${s.prefix}/`));
  return scope?.presenter ?? presenters.fallback;
}

/** Fastify's `frameworkErrors`: errors raised before routing (a URL that does not decode). */
export function frameworkErrorHandler(presenters: ScopePresenters) {
  return (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) => {
    const domainError =
      error.code === 'FST_ERR_BAD_URL'
        ? new DomainError('validation_failed', 'the URL is not valid: it has a bad percent-escape', {
            field: 'url',
          })
        : error;
    presentError(presenterFor(request.url, presenters), domainError, request, reply);
  };
}

/**
 * Node's `clientError`: a request its HTTP parser refused (headers over the size limit, a malformed
 * request line). There is no request object, so the answer is written on the socket by hand, in the
 * envelope of the API the request line names.
 */
export function clientErrorHandler(presenters: ScopePresenters) {
  return (err: ConnectionError, socket: Socket) => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const packet: unknown = err.rawPacket;
    const head = Buffer.isBuffer(packet)
      ? packet.toString('latin1')
      : typeof packet === 'string'
        ? packet
        : '';
    const requestLine = head.split('\r\n', 1)[0] ?? '';
    const url = requestLine.split(' ')[1] ?? '/';
    const error =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new DomainError('headers_too_large', 'the request head is too large (at most 16 KiB)')
        : new DomainError('validation_failed', 'the request could not be parsed as HTTP');
    const requestId = newId('request');
    const rendered = presenterFor(url, presenters)(error, requestId);
    const body = JSON.stringify(rendered.body);
    socket.end(
      `HTTP/1.1 ${rendered.status} ${STATUS_CODES[rendered.status] ?? 'Error'}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\n` +
        'X-Content-Type-Options: nosniff\r\n' +
        'Connection: close\r\n\r\n' +
        body,
    );
  };
}

/** JSON bodies with fastify's own safe parser; an empty body with a JSON content type is no body. */
export function acceptEmptyJson(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else if (nestsDeeperThan(String(body), MAX_JSON_DEPTH)) done(tooDeep('body'), undefined);
    else void parse(request, String(body), done);
  });
}

/** Refuses URLs past the limit (onRequest, before any authentication runs). */
export function refuseLongUrls(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.url.length > MAX_URL_LENGTH) {
      throw new DomainError('uri_too_long', `the URL is too long (at most ${MAX_URL_LENGTH} characters)`, {
        field: 'url',
      });
    }
  });
}

/** Refuses NUL and lone surrogates in the path, the query and the body (preValidation, every route). */
export function refuseUnstorableStrings(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const field =
      findUnstorable(request.params, '') ??
      findUnstorable(request.query, '') ??
      findUnstorable(request.body, '');
    if (field !== undefined) {
      throw new DomainError(
        'validation_failed',
        `${field || 'the request'} holds a character that cannot be stored (NUL or an unpaired surrogate)`,
        { field: field || 'body' },
      );
    }
  });
}

/**
 * The path (a.b.0) of the first string, or object key, that Postgres could not store; else undefined.
 * Walked with a stack of its own, not by recursion: however deep a client nests its input, this cannot
 * overflow the call stack (the parsers bound JSON's depth too, client-json.ts).
 */
export function findUnstorable(value: unknown, path: string): string | undefined {
  const pending: [unknown, string][] = [[value, path]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, at] = next;
    if (typeof item === 'string') {
      if (!isStorable(item)) return at;
      continue;
    }
    if (item === null || typeof item !== 'object' || Buffer.isBuffer(item)) continue;
    const entries: [string, unknown][] = Array.isArray(item)
      ? item.map((v, i) => [String(i), v])
      : Object.entries(item as Record<string, unknown>);
    // Pushed last to first, so the first field is looked at first (the path named is the first one).
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i] as [string, unknown];
      const childAt = at ? `${at}.${key}` : key;
      if (!isStorable(key)) return childAt;
      pending.push([child, childAt]);
    }
  }
  return undefined;
}

const isStorable = (text: string) => !text.includes('\u0000') && text.isWellFormed();
