// `tessera listen --forward-to URL`: a developer's machine receives a tenant's webhooks from a running
// Tessera, as `stripe listen` does. New events are read from the operator's event log (polling), each is
// built by its channel exactly as its webhook would be — same headers, same body bytes, same signature
// under the tenant's secret — and posted to the local URL; every answer is logged as it comes.
import { setTimeout as sleep } from 'node:timers/promises';
import { adminRequest, type ServerConnection } from './server-connection.ts';

export interface ListenOptions {
  forwardTo: string;
  api?: string | undefined;
  tenant?: string | undefined;
  json: boolean;
  intervalMs: number;
  signal: AbortSignal;
}

interface EventPage {
  data: { eventId: string; api: string; tenantId: string; type: string }[];
  nextCursor: string | null;
}

interface WebhookRequest {
  eventId: string;
  api: string;
  tenantId: string;
  type: string;
  headers: Record<string, string>;
  body: string;
}

const PAGE = 100;
const MAX_PAGES = 20;

export async function listen(
  connection: ServerConnection,
  options: ListenOptions,
  out: { line: (text: string) => void; info: (text: string) => void },
): Promise<number> {
  const seen = new Set<string>();
  // What exists already is history: only events made from now on are forwarded.
  for (const event of await newestEvents(connection, options, seen)) seen.add(event.eventId);
  out.info(`Ready. Forwarding new events to ${options.forwardTo} (Ctrl-C to stop).`);
  let forwarded = 0;
  while (!options.signal.aborted) {
    const fresh = (await newestEvents(connection, options, seen)).reverse();
    for (const event of fresh) {
      seen.add(event.eventId);
      const request = await adminRequest<WebhookRequest>(
        connection,
        'GET',
        `/events/${event.eventId}/webhook-request`,
      );
      out.line(await forward(request, options));
      forwarded++;
    }
    await sleep(options.intervalMs, undefined, { signal: options.signal }).catch(() => undefined);
  }
  return forwarded;
}

/** The events not seen yet, newest first, following older pages until a seen one (or the cap). */
async function newestEvents(connection: ServerConnection, options: ListenOptions, seen: Set<string>) {
  const found: EventPage['data'] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const query = new URLSearchParams({ limit: String(PAGE) });
    if (options.api) query.set('api', options.api);
    if (options.tenant) query.set('tenantId', options.tenant);
    if (cursor) query.set('cursor', cursor);
    const result = await adminRequest<EventPage>(connection, 'GET', `/events?${query}`);
    for (const event of result.data) {
      if (seen.has(event.eventId)) return found;
      found.push(event);
    }
    if (!result.nextCursor) return found;
    cursor = result.nextCursor;
  }
  return found;
}

async function forward(request: WebhookRequest, options: ListenOptions): Promise<string> {
  const started = performance.now();
  let status: number | undefined;
  let error: string | undefined;
  try {
    const response = await fetch(options.forwardTo, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(30_000),
    });
    status = response.status;
    await response.arrayBuffer();
  } catch (err) {
    error =
      (err as Error).cause instanceof Error
        ? ((err as Error).cause as Error).message
        : (err as Error).message;
  }
  const durationMs = Math.round(performance.now() - started);
  if (options.json) {
    return JSON.stringify({
      eventId: request.eventId,
      api: request.api,
      tenantId: request.tenantId,
      type: request.type,
      status: status ?? null,
      durationMs,
      ...(error ? { error } : {}),
    });
  }
  const outcome = status !== undefined ? `[${status}]` : `[failed: ${error}]`;
  return `${new Date().toISOString()}  ${request.api.padEnd(8)} ${request.type.padEnd(28)} ${request.eventId}  -> ${outcome} ${durationMs} ms`;
}
