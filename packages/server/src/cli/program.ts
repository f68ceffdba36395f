// The `tessera` command line (commander): what each command and option is, and its help. Exit codes:
// 0 done; 1 it failed (the reason in one line on stderr, with its fix when there is one); 2 a usage
// mistake (unknown command or option, missing argument), answered with the help. `serve` keeps running.
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { AdminAction } from '../admin/cli/admin-cli.ts';
import { AdminUsageError } from '../admin/cli/admin-usage-error.ts';
import type { Config } from '../config.ts';
import { ConfigError } from '../config-error.ts';
import { CONSOLE_ROLES } from '../platform/console/console-roles.ts';
import type { ConsoleRole } from '../platform/db/schema.ts';
import { TESSERA_VERSION } from '../version.ts';
import { describeFailure } from './describe-failure.ts';
import { adminRequest, adminText, CliError, connect, sandboxRequest } from './server-connection.ts';

// Each command loads what it drives when it runs: `--version`, `--help` and the commands that speak to a
// running server load neither the server nor the database (bench/cli.ts measures them).
const lifecycle = () => import('./lifecycle-commands.ts');
const adminCli = () => import('../admin/cli/admin-cli.ts');
const loadConfig = async (): Promise<Config> => (await import('../config.ts')).parseConfig(process.env);

/** What an action answers: an exit code, or `running` for a server that stays up. */
export type Outcome = number | 'running';

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

const collect = (value: string, previous: string[]) => [...previous, value];
const positiveInt = (name: string) => (value: string) => {
  const n = Number(value);
  if (!/^\d{1,10}$/.test(value) || n <= 0)
    throw new InvalidArgumentError(`${name} must be a positive whole number`);
  return n;
};
const nonNegativeInt = (name: string) => (value: string) => {
  if (!/^\d{1,6}$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number`);
  return Number(value);
};
const seconds = (value: string) => {
  const n = Number(value);
  if (!/^\d{1,7}$/.test(value) || n > 30 * 86_400)
    throw new InvalidArgumentError('must be 0 to 2592000 seconds');
  return n;
};
const API = new Option('--api <api>', 'only this API’s events').choices(['issuing', 'payments', 'crypto']);

export function buildProgram(settle: (outcome: Outcome) => void): Command {
  const run = (work: () => Promise<Outcome>) => async () => settle(await work());
  const print = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

  const program = new Command('tessera')
    .description(
      'Self-hostable payments platform: card issuing, card payments and crypto payments on one ledger.',
    )
    .version(TESSERA_VERSION, '-v, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(tessera --help lists the commands)')
    .configureHelp({ sortSubcommands: false })
    .addHelpText(
      'after',
      '\nConfiguration comes from the environment (PORT, TESSERA_MODE, TESSERA_DATA_DIR, DATABASE_URL, …: see the README).\nExit codes: 0 done, 1 failed, 2 usage mistake.',
    );

  program
    .command('serve')
    .description(
      'run the platform: the three APIs, admin, sandbox, hosted pages (embedded Postgres unless DATABASE_URL)',
    )
    .action(async () =>
      settle(
        await (await lifecycle()).serve(await loadConfig()).then((code) => (code < 0 ? 'running' : code)),
      ),
    );

  program
    .command('migrate')
    .description('apply the database migrations, then exit')
    .action(run(async () => (await lifecycle()).migrate(await loadConfig())));

  program
    .command('openapi')
    .description('write each API’s OpenAPI document into a directory')
    .option('--out <dir>', 'where to write them', 'openapi')
    .action((o: { out: string }) =>
      run(async () => (await lifecycle()).exportOpenApi(await loadConfig(), o.out))(),
    );

  program
    .command('backup')
    .description('copy the embedded database and the sandbox secrets into FILE, also while a server runs')
    .argument('<file>', 'the archive to write (.tar)')
    .action((file: string) => run(async () => (await lifecycle()).backup(await loadConfig(), file))());

  program
    .command('restore')
    .description('unpack a backup into a fresh TESSERA_DATA_DIR')
    .argument('<file>', 'the archive `tessera backup` wrote')
    .action((file: string) => run(async () => (await lifecycle()).restore(await loadConfig(), file))());

  program
    .command('audit')
    .description('the audit trail')
    .command('verify')
    .description('check the audit trail’s hash chain: exit 0, or 1 naming the first record that breaks it')
    .option(
      '--from <seq>',
      'start at a checkpoint: the head record an earlier run printed',
      positiveInt('--from'),
    )
    .option('--hash <hash>', 'the checkpoint record’s hash as that run printed it')
    .action((o: { from?: number; hash?: string }) =>
      run(async () => {
        if (o.hash !== undefined && o.from === undefined) {
          throw new AdminUsageError('--hash needs --from: the record the hash is of');
        }
        const from = o.from === undefined ? undefined : { seq: o.from, hash: o.hash };
        return (await adminCli()).verifyAuditTrail(await loadConfig(), from);
      })(),
    );

  const admin = program
    .command('admin')
    .description('onboard tenants and manage their keys (prints credentials once, as JSON)');
  const adminRun = (action: AdminAction) =>
    run(async () => {
      print(await (await adminCli()).runAdminAction(await loadConfig(), action));
      return 0;
    })();
  admin
    .command('create-partner')
    .description('a card issuing partner: its API key and webhook signing key')
    .requiredOption('--name <name>', 'the partner’s name')
    .option('--webhook-url <url>', 'where its webhooks go')
    .action((o: { name: string; webhookUrl?: string }) =>
      adminRun({ command: 'create-partner', name: o.name, webhookUrl: o.webhookUrl }),
    );
  admin
    .command('create-merchant')
    .description('a payments merchant and its sites: API key, each site’s sk_/pk_ keys')
    .requiredOption('--name <name>', 'the merchant’s name')
    .option('--site <name[=ipnUrl]>', 'a site, with its IPN URL (repeat for more)', collect, [])
    .action((o: { name: string; site: string[] }) =>
      adminRun({ command: 'create-merchant', name: o.name, sites: o.site }),
    );
  admin
    .command('create-store')
    .description('a crypto store: client id and secret, webhook secret')
    .requiredOption('--name <name>', 'the store’s name')
    .option('--webhook-url <url>', 'where its webhooks go')
    .option(
      '--currency <CURRENCY:NETWORK>',
      'an accepted currency, e.g. USDC:ETH (repeat for more)',
      collect,
      [],
    )
    .option('--refunds-disabled', 'refuse refunds')
    .action((o: { name: string; webhookUrl?: string; currency: string[]; refundsDisabled?: boolean }) =>
      adminRun({
        command: 'create-store',
        name: o.name,
        webhookUrl: o.webhookUrl,
        currencies: o.currency,
        refundsDisabled: o.refundsDisabled ?? false,
      }),
    );
  admin
    .command('rotate-site-key')
    .description('a new secret key for a site; the previous one works for the overlap')
    .requiredOption('--merchant <id>', 'the merchant', positiveInt('--merchant'))
    .requiredOption('--site <id>', 'the site', positiveInt('--site'))
    .option('--overlap-seconds <seconds>', 'how long the previous key keeps working', seconds, 86_400)
    .action((o: { merchant: number; site: number; overlapSeconds: number }) =>
      adminRun({
        command: 'rotate-site-key',
        merchantId: o.merchant,
        siteId: o.site,
        overlapSeconds: o.overlapSeconds,
      }),
    );

  admin
    .command('create-console-user')
    .description('a person who signs in to the console: an operator, or a member of one tenant')
    .requiredOption('--email <email>', 'their email (the sign-in name)')
    .option(
      '--tenant <kind:id>',
      'the partner, merchant or store they belong to (e.g. merchant:1001); none: operator',
    )
    .option(
      '--password <password>',
      'their password (12+ characters); none: one is generated and printed once',
    )
    .option(
      '--role <role>',
      'operator or operator-viewer (no tenant); viewer, developer, finance or admin (a tenant member); default: operator, or admin with --tenant',
    )
    .action((o: { email: string; tenant?: string; password?: string; role?: string }) => {
      const [kind = '', ...id] = (o.tenant ?? '').split(':');
      if (o.tenant !== undefined && (!['partner', 'merchant', 'store'].includes(kind) || id.length === 0)) {
        throw new AdminUsageError('--tenant is partner:<id>, merchant:<id> or store:<id>');
      }
      const role = (o.role ?? (o.tenant ? 'admin' : 'operator')) as ConsoleRole;
      if (!CONSOLE_ROLES.includes(role))
        throw new AdminUsageError(`--role is one of ${CONSOLE_ROLES.join(', ')}`);
      return adminRun({
        command: 'create-console-user',
        email: o.email,
        password: o.password,
        role,
        tenant: o.tenant ? { kind: kind as 'partner' | 'merchant' | 'store', id: id.join(':') } : undefined,
      });
    });

  const tenantOption = '--tenant <site:ID|store:ID>';
  admin
    .command('set-pricing')
    .description('a site’s or store’s fee schedule: basis points plus a fixed amount per currency')
    .requiredOption(tenantOption, 'the site or store, e.g. site:1001 or store:str_…')
    .requiredOption(
      '--percent-bps <n>',
      'the percentage in basis points (140 = 1.4 %)',
      nonNegativeInt('--percent-bps'),
    )
    .option('--fixed <CUR:amount>', 'a fixed fee per currency, e.g. EUR:0.25 (repeat for more)', collect, [])
    .option('--refund-fees', 'give a refund’s share of the fee back (default: the fee is kept)')
    .action((o: { tenant: string; percentBps: number; fixed: string[]; refundFees?: boolean }) =>
      adminRun({
        command: 'set-pricing',
        tenant: o.tenant,
        percentBps: o.percentBps,
        fixed: o.fixed,
        refundFees: o.refundFees ?? false,
      }),
    );
  admin
    .command('set-payout-schedule')
    .description('when a site or store is paid: interval, anchor, minimum, settlement delay, rolling reserve')
    .requiredOption(tenantOption, 'the site or store, e.g. site:1001 or store:str_…')
    .addOption(
      new Option('--interval <interval>', 'how often')
        .choices(['daily', 'weekly', 'monthly', 'manual'])
        .makeOptionMandatory(),
    )
    .option('--weekly-anchor <weekday>', 'the weekday of a weekly schedule', 'monday')
    .option(
      '--monthly-anchor <day>',
      'the day of the month of a monthly schedule',
      positiveInt('--monthly-anchor'),
      1,
    )
    .option('--minimum <amount>', 'the least a scheduled payout pays', '0.01')
    .option('--delay-days <n>', 'days before a capture is available', nonNegativeInt('--delay-days'), 2)
    .option('--reserve-percent <p>', 'the share of each capture held back', '0')
    .option('--reserve-days <n>', 'for how many days', nonNegativeInt('--reserve-days'), 0)
    .action(
      (o: {
        tenant: string;
        interval: 'daily' | 'weekly' | 'monthly' | 'manual';
        weeklyAnchor: string;
        monthlyAnchor: number;
        minimum: string;
        delayDays: number;
        reservePercent: string;
        reserveDays: number;
      }) => adminRun({ command: 'set-payout-schedule', ...o }),
    );

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
      .option(tenantOption, 'the site or store (balance)'),
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

  return program;
}

/** Runs the CLI on these arguments; answers the exit code, or `running`. */
export async function runCli(argv: string[]): Promise<Outcome> {
  let outcome: Outcome = 0;
  const program = buildProgram((o) => {
    outcome = o;
  });
  const override = (command: Command) => {
    command.exitOverride();
    for (const sub of command.commands) override(sub);
  };
  override(program);
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return outcome;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are answers, not mistakes.
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return 0;
      return 2;
    }
    if (err instanceof ConfigError || err instanceof AdminUsageError) {
      process.stderr.write(`tessera: ${err.message}\n`);
      return err instanceof AdminUsageError ? 2 : 1;
    }
    process.stderr.write(`tessera: ${describeFailure(err)}\n`);
    return 1;
  }
}
