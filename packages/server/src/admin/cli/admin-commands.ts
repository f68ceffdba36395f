// `tessera admin …`: onboard tenants, rotate keys, add console users and set money out's terms, on the
// database directly (admin-cli.ts carries each action out; it prints credentials once, as JSON).
import { type Command, Option } from 'commander';
import { CONSOLE_ROLES } from '../../platform/console/console-roles.ts';
import type { ConsoleRole } from '../../platform/db/schema.ts';
import type { AdminAction } from './admin-cli.ts';
import { AdminUsageError } from './admin-usage-error.ts';
import {
  type CommandContext,
  collect,
  nonNegativeInt,
  positiveInt,
  seconds,
  TENANT_OPTION,
} from './command-options.ts';

const adminCli = () => import('./admin-cli.ts');

export function addAdminCommands(program: Command, { run, print, loadConfig }: CommandContext): void {
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

  admin
    .command('set-pricing')
    .description('a site’s or store’s fee schedule: basis points plus a fixed amount per currency')
    .requiredOption(TENANT_OPTION, 'the site or store, e.g. site:1001 or store:str_…')
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
    .requiredOption(TENANT_OPTION, 'the site or store, e.g. site:1001 or store:str_…')
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
}
