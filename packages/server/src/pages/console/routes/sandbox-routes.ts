// Console › Sandbox (sandbox mode, operators): the clock (advance by a duration, running what became due),
// the simulators' triggers (any documented event for a tenant), and the inbox of what the notifier "sent".

import type { FastifyInstance } from 'fastify';
import { contextOf, sendConsolePage } from '../../../platform/console/console-http.ts';
import { details, listView, notice, postForm } from '../../../platform/console/console-layout.ts';
import { type Html, h } from '../../../platform/console/html-template.ts';
import { textBody } from '../../../platform/console/route-kit.ts';
import { idLink, when } from '../../../platform/console/values.ts';
import { DomainError, notFound } from '../../../platform/errors/domain-error.ts';
import { advanceAndRunSweeps, type ClockDeps } from '../../../sandbox/http/clock-routes.ts';
import type { TriggerCatalog } from '../../../sandbox/triggers/trigger-catalog.ts';
import type { PlatformConsoleDeps } from '../console-deps.ts';

export interface SandboxConsoleDeps extends PlatformConsoleDeps {
  clockDeps: ClockDeps;
  triggers: TriggerCatalog;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };
/** The longest a single advance may move the clock (a year). */
const MAX_ADVANCE_SECONDS = 366 * 86_400;

/** "90", "90s", "15m", "2h", "30d" → seconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d{1,9})\s*([smhd]?)$/i.exec(text.trim());
  if (!match) return undefined;
  const seconds = Number(match[1]) * (UNITS[(match[2] || 's').toLowerCase()] ?? 1);
  return seconds > 0 && seconds <= MAX_ADVANCE_SECONDS ? seconds : undefined;
}

export async function registerSandboxConsoleRoutes(
  app: FastifyInstance,
  deps: SandboxConsoleDeps,
): Promise<void> {
  const operatorOnly = (request: Parameters<typeof contextOf>[0]) => {
    if (contextOf(request, deps).viewer.role !== 'operator') throw notFound('page');
  };

  const sandboxPage = async (request: Parameters<typeof contextOf>[0], result?: Html, status = 200) => {
    const ctx = contextOf(request, deps);
    const messages = await deps.services.railSandbox.inbox.list(deps.services.db, { limit: 30 });
    const triggers = deps.triggers.list();
    return {
      status,
      content: h`${result ?? ''}
<h2>Clock</h2>${details([['Sandbox time', when(deps.clockDeps.clock.now())]])}
${postForm(
  ctx,
  '/console/sandbox/clock',
  [
    {
      name: 'duration',
      label: 'Advance by',
      value: '1h',
      required: true,
      hint: 'seconds, or with s, m, h or d: 90s, 15m, 2h, 30d',
    },
  ],
  'Advance the clock',
)}
<h2>Triggers</h2><p>Make the simulated world produce a real event: its objects are made through the APIs’ services and its
webhook goes out as in real use.</p>
<form method="post" action="/console/sandbox/trigger" class="action">
<input type="hidden" name="csrf" value="${ctx.csrfToken}">
<label for="trigger-event">Event</label>
<select id="trigger-event" name="event" required>${triggers.map((t) => h`<option value="${t.event}">${t.api}: ${t.event} — ${t.description}</option>`)}</select>
<label for="trigger-tenant">Tenant id (optional: the API’s newest partner, site or store)</label>
<input id="trigger-tenant" name="tenantId" maxlength="64">
<button type="submit">Trigger</button>
</form>
<h2>Inbox</h2>${listView({
        caption: 'Emails and SMS the sandbox sent, newest first',
        rows: messages,
        empty: 'No messages yet.',
        columns: [
          { label: 'When', cell: (m) => when(m.createdAt) },
          { label: 'Channel', cell: (m) => m.channel },
          { label: 'To', cell: (m) => m.recipient },
          { label: 'Subject', cell: (m) => m.subject },
          { label: 'Message', cell: (m) => h`<span class="break">${m.body}</span>` },
        ],
      })}`,
    };
  };

  app.get('/sandbox', async (request, reply) => {
    operatorOnly(request);
    const page = await sandboxPage(request);
    return sendConsolePage(request, reply, deps, 'Sandbox', page.content);
  });

  // Neither action is replayable (as /sandbox/clock/advance): the forms carry no idempotency key.
  // Moving the clock runs the sweeps, each in its own transactions: not one unit of work (nor replayable).
  app.post('/sandbox/clock', { config: { idempotency: 'refuse' } }, async (request, reply) => {
    operatorOnly(request);
    const seconds = parseDuration(textBody(request).duration ?? '');
    if (seconds === undefined) {
      const page = await sandboxPage(
        request,
        notice('The duration must be a number of seconds, or end in s, m, h or d (up to a year).', 'error'),
      );
      return sendConsolePage(request, reply, deps, 'Sandbox', page.content, 400);
    }
    const processed = await advanceAndRunSweeps(deps.clockDeps, seconds, request.log);
    const ran = Object.entries(processed).filter(([, n]) => n > 0);
    const page = await sandboxPage(
      request,
      notice(
        `The clock moved on ${seconds} s, to ${deps.clockDeps.clock.now().toISOString()}. ${ran.length ? `Done on the way: ${ran.map(([k, n]) => `${k} ${n}`).join(', ')}.` : 'Nothing was due.'}`,
      ),
    );
    return sendConsolePage(request, reply, deps, 'Sandbox', page.content);
  });

  // The bank's outcomes for a payout, as the sandbox routes give them (docs/payouts.md, The bank rail): the
  // payout's page offers them to the operator. Paid goes the rail's own way (a camt.054 on the files rail).
  app.post<{ Params: { id: string } }>(
    '/sandbox/payouts/:id/bank',
    { config: { idempotency: 'refuse' } },
    async (request, reply) => {
      operatorOnly(request);
      const outcome = textBody(request).outcome;
      const { moneyOut, transact } = deps.services;
      const id = request.params.id;
      if (outcome === 'paid') await moneyOut.bank.book(id);
      else if (outcome === 'returned' || outcome === 'failed') {
        await transact((tx) => moneyOut.lifecycle.step(tx, id, outcome, { failureCode: 'AC04' }));
      } else {
        throw new DomainError('validation_failed', 'outcome is paid, returned or failed', {
          field: 'outcome',
        });
      }
      return reply
        .code(303)
        .header('location', `/console/money/payouts/${encodeURIComponent(id)}?done=${outcome}`)
        .send();
    },
  );

  app.post('/sandbox/trigger', { config: { idempotency: 'refuse' } }, async (request, reply) => {
    operatorOnly(request);
    const body = textBody(request);
    const tenant = body.tenantId?.trim();
    try {
      if (!body.event) throw new DomainError('validation_failed', 'choose an event', { field: 'event' });
      const fired = await deps.triggers.fire(
        body.event,
        tenant ? tenant.slice(0, 64) : undefined,
        request.log,
      );
      const page = await sandboxPage(
        request,
        h`${notice(`Triggered ${fired.event} for ${fired.api} tenant ${fired.tenantId}.`)}${listView({
          caption: 'What it made',
          rows: [
            ...Object.entries(fired.objects).map(([k, v]) => ({ what: k, id: v })),
            ...fired.events.map((e) => ({ what: e.type, id: e.eventId })),
          ],
          columns: [
            { label: 'What', cell: (r) => r.what },
            { label: 'Id', cell: (r) => idLink(r.id) },
          ],
        })}`,
      );
      return sendConsolePage(request, reply, deps, 'Sandbox', page.content, 201);
    } catch (err) {
      if (!(err instanceof DomainError) || err.status >= 500) throw err;
      const page = await sandboxPage(request, notice(err.message, 'error'), err.status);
      return sendConsolePage(request, reply, deps, 'Sandbox', page.content, err.status);
    }
  });
}
