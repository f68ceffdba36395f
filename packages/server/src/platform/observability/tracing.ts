// OpenTelemetry traces (docs/operations.md, Traces). Off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; then spans are batched and exported over OTLP/HTTP, with the
// standard variables (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS…). The spans are made by
// hand where the work happens — the request (W3C `traceparent` read), the idempotency claim, each SQL
// statement (its text: parameters are never in it), each rail call, the outbox, each webhook attempt
// (linked to the request that queued it) — because the auto-instrumentations patch modules through
// require hooks that an ESM server does not load through. With tracing off the API is OpenTelemetry's
// no-op: a span costs a function call.
import {
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';

export { SpanKind };

const tracer = () => trace.getTracer('tessera');

export interface TracingSettings {
  /** The OTLP/HTTP traces URL (…/v1/traces); undefined: tracing off */
  tracesUrl: string | undefined;
  serviceName: string;
  serviceVersion: string;
}

/** The traces URL the standard variables name: the traces endpoint as given, or the base plus /v1/traces. */
export function tracesUrlFrom(env: NodeJS.ProcessEnv): string | undefined {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const exact = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (exact) return exact;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}

export interface Tracing {
  /** Sends what is batched (tests; a stop) */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** Starts exporting, process-wide (OpenTelemetry's API is global); undefined when tracing is off. */
export function startTracing(settings: TracingSettings): Tracing | undefined {
  if (!settings.tracesUrl) return undefined;
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': settings.serviceVersion,
    }),
    spanProcessors: [
      new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.tracesUrl }) }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  running = provider;
  return {
    flush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      running = undefined;
      // Another app in this process (tests) starts from nothing.
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

let running: TracerProvider | undefined;

/** Sends the spans batched so far (tests read them from their collector right after). */
export async function flushTraces(): Promise<void> {
  await running?.forceFlush();
}

/**
 * Runs `work` in a span that ends with it: an error marks it failed (its message, never a value from a
 * request) and is thrown on.
 */
export function inSpan<T>(
  name: string,
  attributes: Record<string, string | number | boolean | undefined>,
  work: (span: Span) => Promise<T>,
  options: { kind?: SpanKind; links?: Link[]; parent?: Context } = {},
): Promise<T> {
  return tracer().startActiveSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      attributes,
      ...(options.links ? { links: options.links } : {}),
    },
    options.parent ?? context.active(),
    async (span) => {
      try {
        return await work(span);
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** Whether a real tracer is recording (so work done only for a span is skipped when off). */
export const isTracing = (): boolean => trace.getActiveSpan()?.isRecording() ?? false;

/** The active span's context as a `traceparent` header value, to carry it to later work (a job). */
export function currentTraceparent(): string | undefined {
  if (!isTracing()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** A link to the span a `traceparent` names (the request that queued a webhook attempt). */
export function linkTo(traceparent: string | undefined): Link[] {
  if (!traceparent) return [];
  const spanContext = trace.getSpanContext(propagation.extract(context.active(), { traceparent }));
  return spanContext ? [{ context: spanContext }] : [];
}

/** The context a request's headers carry (`traceparent`, `tracestate`). */
export const contextFromHeaders = (headers: Record<string, unknown>): Context =>
  propagation.extract(context.active(), headers);

/** The trace and span ids of the active span, for log lines; empty when there is none. */
export function traceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span?.isRecording()) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

export { context, ROOT_CONTEXT, SpanStatusCode, trace };

/**
 * The object with each method run in a span named `rail <name>.<method>` while a trace is recording
 * (a rail's call to the outside world: the card network, the chain, mail, the bank). Calls inside the
 * rail itself go to the object unwrapped. Made after startTracing (createApp starts it first).
 */
export function traced<T extends object>(name: string, target: T): T {
  // Tracing off when the rail is made (the default): the rail itself, nothing added to its calls.
  if (!running) return target;
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property);
      if (typeof value !== 'function' || typeof property !== 'string' || property === 'constructor')
        return value;
      return (...args: unknown[]) => {
        if (!isTracing()) return value.apply(object, args);
        return tracer().startActiveSpan(
          `rail ${name}.${property}`,
          { kind: SpanKind.CLIENT, attributes: { 'tessera.rail': name } },
          (span) => {
            const fail = (err: unknown) => {
              span.setStatus({
                code: SpanStatusCode.ERROR,
                message: err instanceof Error ? err.name : 'error',
              });
              span.end();
              throw err;
            };
            try {
              const result = value.apply(object, args);
              if (result && typeof (result as Promise<unknown>).then === 'function') {
                return (result as Promise<unknown>).then((v) => {
                  span.end();
                  return v;
                }, fail);
              }
              span.end();
              return result;
            } catch (err) {
              return fail(err);
            }
          },
        );
      };
    },
  });
}
