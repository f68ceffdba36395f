// `tessera compliance …` (docs/compliance.md, Command line): a merchant's or store's business profile
// written from a JSON file, submitted, decided, its tenant invited to the hosted page; the cases listed and
// one exported for a report (JSON, CSV or goAML XML). Each command is one call of the admin API of the
// running server, so it is checked, screened and audited exactly as through the API.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AdminUsageError } from '../admin/cli/admin-usage-error.ts';
import type { CommandContext } from '../admin/cli/command-options.ts';
import {
  adminRequest,
  adminText,
  type ConnectionOptions,
  connect,
  withConnection,
} from './server-connection.ts';

type Connection = ConnectionOptions;
type Tenant = Connection & { tenant: string };

/** `merchant:<id>` or `store:<id>` as the admin API's path of its business profile */
function profilePath(tenant: string): string {
  const [kind = '', id = ''] = tenant.split(':');
  if (!['merchant', 'store'].includes(kind) || !/^[\w-]{1,64}$/.test(id))
    throw new AdminUsageError('--tenant is merchant:<id> or store:<id>');
  return `/${kind}s/${encodeURIComponent(id)}`;
}

export function addComplianceCommands(program: Command, { run, print, loadConfig }: CommandContext): void {
  const compliance = program
    .command('compliance')
    .description('business profiles (KYB) and compliance cases of the running server (docs/compliance.md)');
  const call = (
    o: Connection,
    method: 'GET' | 'POST' | 'PUT',
    path: () => string,
    body?: () => Promise<unknown>,
  ) =>
    run(async () => {
      const target = path();
      const sent = body ? await body() : undefined;
      print(await adminRequest(await connect(await loadConfig(), o), method, target, sent));
      return 0;
    })();
  const tenantCommand = (name: string, description: string) =>
    withConnection(
      compliance
        .command(name)
        .description(description)
        .requiredOption('--tenant <tenant>', 'merchant:<id> or store:<id>'),
    );

  tenantCommand('profile', 'the business profile, its status and decision').action((o: Tenant) =>
    call(o, 'GET', () => `${profilePath(o.tenant)}/business-profile`),
  );

  tenantCommand(
    'put-profile',
    'write the profile from a JSON file (the admin API’s body), screened as written',
  )
    .argument(
      '<file>',
      'the profile as JSON: legalName, registrationNumber, country, address, mcc, owners, directors…',
    )
    .action((file: string, o: Tenant) =>
      call(
        o,
        'PUT',
        () => `${profilePath(o.tenant)}/business-profile`,
        async () => {
          try {
            return JSON.parse(await readFile(file, 'utf8')) as unknown;
          } catch (err) {
            throw new AdminUsageError(`${file}: ${(err as Error).message}`);
          }
        },
      ),
    );

  tenantCommand('submit', 'send the draft profile for review').action((o: Tenant) =>
    call(o, 'POST', () => `${profilePath(o.tenant)}/business-profile/submit`),
  );

  tenantCommand('decide', 'decide the submitted profile, with the reason')
    .requiredOption('--decision <decision>', 'approved, rejected or more_information')
    .requiredOption('--reason <reason>', 'why (kept with the decision and audited)')
    .action((o: Tenant & { decision: string; reason: string }) =>
      call(
        o,
        'POST',
        () => `${profilePath(o.tenant)}/business-profile/decision`,
        async () => ({ decision: o.decision, reason: o.reason }),
      ),
    );

  tenantCommand('invite', 'email a link to the hosted onboarding page (7 days, once)')
    .requiredOption('--email <email>', 'who fills the profile in')
    .action((o: Tenant & { email: string }) =>
      call(
        o,
        'POST',
        () => `${profilePath(o.tenant)}/onboarding-invitations`,
        async () => ({ email: o.email }),
      ),
    );

  withConnection(
    compliance
      .command('cases')
      .description('the cases, newest first')
      .option('--status <status>', 'open, cleared or confirmed'),
  ).action((o: Connection & { status?: string }) =>
    call(o, 'GET', () => `/compliance/cases${o.status ? `?status=${encodeURIComponent(o.status)}` : ''}`),
  );

  withConnection(
    compliance
      .command('export')
      .description('a case for a report: JSON (default), its timeline as CSV, or goAML XML for the FIU')
      .argument('<case>', 'the case id')
      .option('--format <format>', 'json, csv or goaml', 'json')
      .option('--indicators <codes>', 'goaml: the FIU’s indicator codes, comma-separated')
      .option('--report-code <code>', 'goaml: the report code (default SAR)'),
  ).action((caseId: string, o: Connection & { format: string; indicators?: string; reportCode?: string }) =>
    run(async () => {
      if (!['json', 'csv', 'goaml'].includes(o.format))
        throw new AdminUsageError('--format is json, csv or goaml');
      const query = new URLSearchParams({ format: o.format });
      if (o.indicators) query.set('indicators', o.indicators);
      if (o.reportCode) query.set('reportCode', o.reportCode);
      const text = await adminText(
        await connect(await loadConfig(), o),
        `/compliance/cases/${encodeURIComponent(caseId)}/export?${query}`,
      );
      if (o.format === 'json') print(JSON.parse(text));
      else process.stdout.write(text);
      return 0;
    })(),
  );
}
