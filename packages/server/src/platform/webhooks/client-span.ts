// A webhook attempt's POST as OpenTelemetry sees it (docs/operations.md, Traces).
import { inSpan, SpanKind, SpanStatusCode } from '../observability/tracing.ts';
import type { HttpSender, OutboundRequest, OutboundResult } from './http-sender.ts';

/**
 * The attempt's POST as an HTTP client span with OpenTelemetry's semantic attributes: the URL without its
 * query or credentials (a receiver's token may ride there), the method, the status, and the error's type.
 */
export function postInClientSpan(sender: HttpSender, request: OutboundRequest): Promise<OutboundResult> {
  const url = new URL(request.url);
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  return inSpan(
    'POST',
    {
      'http.request.method': 'POST',
      'url.full': shown,
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    },
    async (span) => {
      const result = await sender.post(request);
      if (result.statusCode !== undefined) span.setAttribute('http.response.status_code', result.statusCode);
      const errorType = result.error
        ? (/^([A-Z_]+|timeout|refused|abandoned)\b/.exec(result.error)?.[1] ?? '_OTHER')
        : result.statusCode !== undefined && result.statusCode >= 400
          ? String(result.statusCode)
          : undefined;
      if (errorType) {
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return result;
    },
    { kind: SpanKind.CLIENT },
  );
}
