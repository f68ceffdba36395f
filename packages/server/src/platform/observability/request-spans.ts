// A server span per HTTP request (docs/operations.md, Traces): started when the request arrives, as the
// child of the caller's `traceparent` when it sends one, active for the hooks and the handler (so the
// SQL, rail and outbox spans below it are its children), named by its route and ended with its status.
// Its ids are kept on the request for the request's log line, written after it ends.
import type { Span } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { context, contextFromHeaders, SpanKind, SpanStatusCode, trace } from './tracing.ts';

declare module 'fastify' {
  interface FastifyRequest {
    traceIds?: { trace_id: string; span_id: string };
  }
}

export function addRequestSpans(app: FastifyInstance): void {
  const spans = new WeakMap<object, Span>();
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = contextFromHeaders(request.headers);
    const span = trace.getTracer('tessera').startSpan(
      request.method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': request.method, 'tessera.request_id': request.id },
      },
      parent,
    );
    if (!span.isRecording()) return done();
    spans.set(request, span);
    const { traceId, spanId } = span.spanContext();
    request.traceIds = { trace_id: traceId, span_id: spanId };
    // The rest of the request (hooks, handler, the answer) runs with this span active.
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const span = spans.get(request);
    if (span) {
      const route = request.routeOptions.url;
      span.updateName(`${request.method} ${route ?? 'unmatched'}`);
      if (route) span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
}
