// Prometheus metrics on a per-app registry (tests build many apps in one process).
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  webhookAttempts: Counter<'api' | 'outcome'>;
  bankInboxFiles: Counter<'outcome'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'tessera_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'tessera_http_requests_total',
      help: 'HTTP requests answered, by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'tessera_http_request_duration_seconds',
      help: 'Time to answer an HTTP request',
      labelNames: ['method', 'route'],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'tessera_webhook_attempts_total',
      help: 'Webhook and IPN delivery attempts, by API and outcome',
      labelNames: ['api', 'outcome'],
      registers: [registry],
    }),
    bankInboxFiles: new Counter({
      name: 'tessera_bank_inbox_files_total',
      help: 'Files read from the bank inbox, by outcome (applied, unmatched lines, rejected)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
  };
}
