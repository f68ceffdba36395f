// The commands that speak to a running server over HTTP with the admin token: events and redelivery,
// sandbox triggers, reconciliation, a payout run, reports, and `listen` (forwarding webhooks locally).
import { Argument, type Command } from 'commander';
import { AdminUsageError } from '../admin/cli/admin-usage-error.ts';
import { API, type CommandContext, positiveInt, TENANT_OPTION } from '../admin/cli/command-options.ts';
import { adminRequest, adminText, CliError, connect, sandboxRequest } from './server-connection.ts';

/** What each reconcile check counts (docs/payouts.md, Reconciliation): its units, not always payouts. */
const RECONCILE_COUNTS: Record<string, string> = {
  balances: 'tenant balances (tenant and currency) against the ledger',
  payout_items: 'itemized payouts made that day, against their items',
  bank_files: 'bank files written that day, against their payouts',
  bank_statements: 'bank files read that day',
  payouts_in_transit: 'currencies of open payouts, against the in-transit account',
  revenue: 'currencies of fees, against the revenue account',
  late_payouts: 'payouts in transit, against their arrival date',
};

export function addServerCommands(program: Command, { run, print, loadConfig }: CommandContext): void {
  const connection = (command: Command) =>
    command
      .option('--server <url>', 'the running Tessera (default: TESSERA_PUBLIC_URL, else this machine’s PORT)')
      .option(
        '--admin-token <token>',
        'the operator’s token (default: TESSERA_ADMIN_TOKEN, else the sandbox’s data directory)',
      );

  connection(
    program
      .command('events')
      .description('list webhook events, newest first')
      .addOption(API)
      .option('--tenant <id>', 'only this tenant’s (partner, site or store id)')
      .option('--type <type>', 'only this event type')
      .option('--limit <n>', 'how many', positiveInt('--limit'), 20)
      .option('--json', 'print JSON'),
  ).action(
    (o: {
      api?: string;
      tenant?: string;
      type?: string;
      limit: number;
      json?: boolean;
      server?: string;
      adminToken?: string;
    }) =>
      run(async () => {
        const query = new URLSearchParams({ limit: String(o.limit) });
        if (o.api) query.set('api', o.api);
        if (o.tenant) query.set('tenantId', o.tenant);
        if (o.type) query.set('type', o.type);
        const page = await adminRequest<{
          data: {
            eventId: string;
            api: string;
            tenantId: string;
            type: string;
            createdAt: string;
            deliveryState: string;
          }[];
        }>(await connect(await loadConfig(), o), 'GET', `/events?${query}`);
        if (o.json) print(page.data);
        else
          for (const e of page.data)
            process.stdout.write(
              `${e.createdAt}  ${e.api.padEnd(8)} ${e.tenantId.padEnd(28)} ${e.type.padEnd(28)} ${e.deliveryState.padEnd(9)} ${e.eventId}\n`,
            );
        return 0;
      })(),
  );

  connection(
    program
      .command('redeliver')
      .description('send an event’s webhook again (same event id, fresh attempts)')
      .argument('<eventId>', 'the event')
      .option('--json', 'print JSON'),
  ).action((eventId: string, o: { json?: boolean; server?: string; adminToken?: string }) =>
    run(async () => {
      const result = await adminRequest<{ deliveryId: string }>(
        await connect(await loadConfig(), o),
        'POST',
        `/events/${encodeURIComponent(eventId)}/redeliver`,
      );
      if (o.json) print(result);
      else process.stdout.write(`redelivering ${eventId} (delivery ${result.deliveryId})\n`);
      return 0;
    })(),
  );

  connection(
    program
      .command('trigger')
      .description('make the sandbox produce a real event of a type for a tenant (no EVENT: list them)')
      .argument(
        '[event]',
        'the event type, e.g. ORDER.PAYMENT.RECEIVED, transaction.complete-ok, cardStatusChanged',
      )
      .option('--tenant <id>', 'the partner, site or store (default: the newest of the event’s API)')
      .option('--json', 'print JSON'),
  ).action(
    (
      event: string | undefined,
      o: { tenant?: string; json?: boolean; server?: string; adminToken?: string },
    ) =>
      run(async () => {
        const connected = await connect(await loadConfig(), o);
        if (!event) {
          const list = await sandboxRequest<{ data: { event: string; api: string; description: string }[] }>(
            connected,
            'GET',
            '/triggers',
          );
          if (o.json) print(list.data);
          else
            for (const t of list.data)
              process.stdout.write(`${t.api.padEnd(9)}${t.event.padEnd(30)}${t.description}\n`);
          return 0;
        }
        const made = await sandboxRequest<{
          tenantId: string;
          objects: Record<string, string>;
          events: { eventId: string; type: string }[];
        }>(
          connected,
          'POST',
          `/triggers/${encodeURIComponent(event)}`,
          o.tenant ? { tenantId: o.tenant } : {},
        );
        if (o.json) print(made);
        else {
          process.stdout.write(`triggered ${event} for ${made.tenantId}\n`);
          for (const e of made.events) process.stdout.write(`  ${e.type.padEnd(30)} ${e.eventId}\n`);
        }
        return 0;
      })(),
  );

  connection(
    program
      .command('reconcile')
      .description(
        'prove a day’s books: ledger = balance transactions, bank files = payouts, statements matched (exit 1 when not)',
      )
      .option('--date <YYYY-MM-DD>', 'the day (default: today on the server’s clock)')
      .option(
        '--full',
        'prove every day again from the first, not from the newest day proved (slow on a year)',
      )
      .option('--json', 'print JSON'),
  ).action((o: { date?: string; full?: boolean; json?: boolean; server?: string; adminToken?: string }) =>
    run(async () => {
      const report = await adminRequest<{
        date: string;
        clean: boolean;
        checked: Record<string, number>;
        findings: { check: string; subject: string; expected: string; actual: string }[];
      }>(
        await connect(await loadConfig(), o),
        'GET',
        `/reconcile?${new URLSearchParams({ ...(o.date ? { date: o.date } : {}), ...(o.full ? { full: 'true' } : {}) })}`,
      );
      if (o.json) print(report);
      else {
        process.stdout.write(
          `${report.date}: ${report.clean ? 'clean' : `${report.findings.length} findings`}\n`,
        );
        for (const [check, n] of Object.entries(report.checked)) {
          process.stdout.write(`  ${check.padEnd(18)} ${n} ${RECONCILE_COUNTS[check] ?? 'checked'}\n`);
        }
        for (const f of report.findings) {
          process.stdout.write(
            `  ${f.check.padEnd(18)} ${f.subject}: expected ${f.expected}, found ${f.actual}\n`,
          );
        }
      }
      return report.clean ? 0 : 1;
    })(),
  );

  connection(
    program
      .command('payout-run')
      .description(
        'run the payout schedule now: pay every tenant due today, then hand the payouts to the bank',
      )
      .option('--json', 'print JSON'),
  ).action((o: { json?: boolean; server?: string; adminToken?: string }) =>
    run(async () => {
      const result = await adminRequest<{
        payouts: { id: string; amount: string; currency: string }[];
        sent: number;
      }>(await connect(await loadConfig(), o), 'POST', '/payout-runs');
      if (o.json) print(result);
      else {
        for (const p of result.payouts) process.stdout.write(`${p.id}  ${p.amount} ${p.currency}\n`);
        process.stdout.write(`${result.payouts.length} payouts made, ${result.sent} sent to the bank\n`);
      }
      return 0;
    })(),
  );

  connection(
    program
      .command('report')
      .description(
        'download a report as CSV: revenue (per day, tenant, currency), payout (its settlement report), balance (a tenant’s, by day) or statement (an issuing account’s month)',
      )
      .addArgument(
        new Argument('<kind>', 'which report').choices(['revenue', 'payout', 'balance', 'statement']),
      )
      .option('--account <id>', 'the issuing account (statement)')
      .option('--month <YYYY-MM>', 'the month (statement)')
      .option('--from <YYYY-MM-DD>', 'first day (revenue, balance)')
      .option('--to <YYYY-MM-DD>', 'last day (revenue, balance)')
      .option('--payout <id>', 'the payout (payout)')
      .option(TENANT_OPTION, 'the site or store (balance)'),
  ).action(
    (
      kind: 'revenue' | 'payout' | 'balance' | 'statement',
      o: {
        from?: string;
        to?: string;
        payout?: string;
        tenant?: string;
        account?: string;
        month?: string;
        server?: string;
        adminToken?: string;
      },
    ) =>
      run(async () => {
        const need = (value: string | undefined, option: string) => {
          if (!value) throw new AdminUsageError(`report ${kind} needs ${option}`);
          return encodeURIComponent(value);
        };
        const path =
          kind === 'revenue'
            ? `/reports/revenue?from=${need(o.from, '--from')}&to=${need(o.to, '--to')}`
            : kind === 'payout'
              ? `/payouts/${need(o.payout, '--payout')}/report`
              : kind === 'statement'
                ? `/issuing/accounts/${need(o.account, '--account')}/statement?month=${need(o.month, '--month')}`
                : `/reports/balance?tenant=${need(o.tenant, '--tenant')}&from=${need(o.from, '--from')}&to=${need(o.to, '--to')}`;
        process.stdout.write(await adminText(await connect(await loadConfig(), o), path));
        return 0;
      })(),
  );

  connection(
    program
      .command('listen')
      .description('forward new webhook events, signed as their webhooks are, to a local URL (Ctrl-C stops)')
      .requiredOption('--forward-to <url>', 'where to post them, e.g. http://localhost:3000/webhooks')
      .addOption(API)
      .option('--tenant <id>', 'only this tenant’s (partner, site or store id)')
      .option('--interval <ms>', 'how often to look for new events', positiveInt('--interval'), 500)
      .option('--json', 'one JSON line per forwarded event'),
  ).action(
    (o: {
      forwardTo: string;
      api?: string;
      tenant?: string;
      interval: number;
      json?: boolean;
      server?: string;
      adminToken?: string;
    }) =>
      run(async () => {
        if (!/^https?:\/\//.test(o.forwardTo)) throw new CliError('--forward-to must be an http(s) URL');
        const stop = new AbortController();
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
        await (await import('./listen.ts')).listen(
          await connect(await loadConfig(), o),
          {
            forwardTo: o.forwardTo,
            api: o.api,
            tenant: o.tenant,
            json: o.json ?? false,
            intervalMs: o.interval,
            signal: stop.signal,
          },
          {
            line: (text) => process.stdout.write(`${text}\n`),
            info: (text) => process.stderr.write(`${text}\n`),
          },
        );
        return 0;
      })(),
  );
}
