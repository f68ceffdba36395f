// Prometheus metrics on a per-app registry (tests build many apps in one process). What the operator's
// dashboard and alert rules read (ops/grafana, ops/prometheus; docs/operations.md, Monitoring): requests
// by route and status (rate, errors, duration per API), webhook attempts and failures per tenant, each
// sweep's runs, and queues read from the database at scrape time.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  webhookAttempts: Counter<'api' | 'outcome'>;
  webhookFailures: Counter<'api' | 'tenant'>;
  bankInboxFiles: Counter<'outcome'>;
  payoutRunFailures: Counter<'tenant'>;
  sweepDuration: Histogram<'sweep'>;
  sweepFailures: Counter<'sweep'>;
  sweepLastSuccess: Gauge<'sweep'>;
}

/** The APIs whose webhooks are counted, and the outcomes of a bank inbox file: their series start at 0. */
const WEBHOOK_APIS = ['issuing', 'payments', 'crypto'] as const;
const BANK_INBOX_OUTCOMES = ['applied', 'rejected', 'unmatched'] as const;

/**
 * Every series the dashboard and the alert rules read exists from the start, at 0, with its known
 * labels: a rule over an absent series never fires, and a panel over one shows "no data".
 */
export function createMetrics(): Metrics {
  const metrics = buildMetrics();
  for (const api of WEBHOOK_APIS) {
    metrics.webhookFailures.inc({ api, tenant: '' }, 0);
    for (const outcome of ['acknowledged', 'failed']) metrics.webhookAttempts.inc({ api, outcome }, 0);
  }
  for (const outcome of BANK_INBOX_OUTCOMES) metrics.bankInboxFiles.inc({ outcome }, 0);
  metrics.payoutRunFailures.inc({ tenant: '' }, 0);
  return metrics;
}

function buildMetrics(): Metrics {
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
    webhookFailures: new Counter({
      name: 'tessera_webhook_failures_total',
      help: 'Webhook and IPN delivery attempts the endpoint did not acknowledge, by API and tenant',
      labelNames: ['api', 'tenant'],
      registers: [registry],
    }),
    bankInboxFiles: new Counter({
      name: 'tessera_bank_inbox_files_total',
      help: 'Files read from the bank inbox, by outcome (applied, unmatched lines, rejected)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    payoutRunFailures: new Counter({
      name: 'tessera_payout_run_failures_total',
      help: 'Steps of the payout run that threw, by tenant (logged; the next round tries the tenant again)',
      labelNames: ['tenant'],
      registers: [registry],
    }),
    sweepDuration: new Histogram({
      name: 'tessera_sweep_duration_seconds',
      help: 'Time one run of a sweep took (the process holding the sweep lock runs them)',
      labelNames: ['sweep'],
      buckets: [0.005, 0.025, 0.1, 0.5, 2.5, 10, 30],
      registers: [registry],
    }),
    sweepFailures: new Counter({
      name: 'tessera_sweep_failures_total',
      help: 'Sweep runs that threw (logged with the sweep name)',
      labelNames: ['sweep'],
      registers: [registry],
    }),
    sweepLastSuccess: new Gauge({
      name: 'tessera_sweep_last_success_timestamp_seconds',
      help: 'When the sweep last ran through without an error (Unix time, real clock)',
      labelNames: ['sweep'],
      registers: [registry],
    }),
  };
}
