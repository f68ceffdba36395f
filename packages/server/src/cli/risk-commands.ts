// `tessera risk …` (docs/risk.md, Command line): the operator's risk rules, lists and reviews from a shell,
// each command one call of the admin API of the running server, so it is checked, audited and takes effect
// in every process exactly as in the console. A list's items come from a CSV file (its first column; a
// first line `value` is a header), sent in batches the API takes.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AdminUsageError } from '../admin/cli/admin-usage-error.ts';
import { type CommandContext, nonNegativeInt } from '../admin/cli/command-options.ts';
import { listItemsOf } from '../platform/risk/list-csv.ts';
import { MAX_ITEMS_PER_REQUEST } from '../platform/risk/risk-lists.ts';
import { adminRequest, type ConnectionOptions, connect, withConnection } from './server-connection.ts';

type Connection = ConnectionOptions;

/** `platform`, or `merchant:<id>`, `store:<id>`, `partner:<id>`, as the admin API takes a scope */
function scopeOf(tenant: string | undefined): { kind: string; id?: string } {
  if (tenant === undefined || tenant === 'platform') return { kind: 'platform' };
  const [kind = '', ...id] = tenant.split(':');
  if (!['merchant', 'store', 'partner'].includes(kind) || id.length === 0)
    throw new AdminUsageError('--tenant is platform, merchant:<id>, store:<id> or partner:<id>');
  return { kind, id: id.join(':') };
}

export function addRiskCommands(program: Command, { run, print, loadConfig }: CommandContext): void {
  const risk = program
    .command('risk')
    .description('risk rules, lists and reviews of the running server (docs/risk.md), as JSON');
  const call = <T>(o: Connection, method: 'GET' | 'POST', path: string, body?: unknown) =>
    run(async () => {
      print(await adminRequest<T>(await connect(await loadConfig(), o), method, path, body));
      return 0;
    })();

  withConnection(
    risk
      .command('rules')
      .description('the rules, by id')
      .option('--tenant <scope>', 'only this scope’s: platform, merchant:<id>, store:<id> or partner:<id>')
      .option('--point <decisionPoint>', 'only this decision point’s'),
  ).action((o: Connection & { tenant?: string; point?: string }) => {
    const query = new URLSearchParams();
    if (o.tenant) query.set('scope', o.tenant);
    if (o.point) query.set('decisionPoint', o.point);
    return call(o, 'GET', `/risk/rules?${query}`);
  });

  withConnection(
    risk
      .command('add-rule')
      .description(
        'write a rule (checked against the decision point’s attributes; a 400 names what is wrong)',
      )
      .requiredOption('--name <name>', 'unique within its scope')
      .requiredOption('--point <decisionPoint>', 'payments.charge, issuing.authorization, crypto.order, …')
      .requiredOption('--expression <cel>', 'a CEL expression; the rule matches when it is true')
      .requiredOption('--action <action>', 'block, review, challenge, decline, hold or allow')
      .option('--tenant <scope>', 'platform (default), merchant:<id>, store:<id> or partner:<id>')
      .option('--shadow', 'evaluate and record, never act')
      .option('--priority <n>', 'lower first', nonNegativeInt('--priority'), 100),
  ).action(
    (
      o: Connection & {
        name: string;
        point: string;
        expression: string;
        action: string;
        tenant?: string;
        shadow?: boolean;
        priority: number;
      },
    ) =>
      call(o, 'POST', '/risk/rules', {
        name: o.name,
        scope: scopeOf(o.tenant),
        decisionPoint: o.point,
        expression: o.expression,
        action: o.action,
        mode: o.shadow ? 'shadow' : 'active',
        priority: o.priority,
      }),
  );

  withConnection(
    risk
      .command('import-list')
      .description(`add a CSV file's first column to a list (in batches of ${MAX_ITEMS_PER_REQUEST})`)
      .argument('<listId>', 'the list (POST /admin/risk/lists creates one)')
      .argument('<file>', 'the CSV file; a first line `value` is a header'),
  ).action((listId: string, file: string, o: Connection) =>
    run(async () => {
      const text = await readFile(file, 'utf8');
      const items = (() => {
        try {
          return listItemsOf(text);
        } catch (err) {
          throw new AdminUsageError(`${file}: ${(err as Error).message}`);
        }
      })();
      if (items.length === 0) throw new AdminUsageError(`${file} has no values in its first column`);
      const connection = await connect(await loadConfig(), o);
      let added = 0;
      for (let i = 0; i < items.length; i += MAX_ITEMS_PER_REQUEST) {
        const batch = items.slice(i, i + MAX_ITEMS_PER_REQUEST);
        added += (
          await adminRequest<{ added: number }>(
            connection,
            'POST',
            `/risk/lists/${encodeURIComponent(listId)}/items`,
            { items: batch },
          )
        ).added;
      }
      print({ listId, read: items.length, added });
      return 0;
    })(),
  );

  withConnection(
    risk
      .command('reviews')
      .description('what rules held for a person (pending unless --status says another)')
      .option('--tenant <scope>', 'only this tenant’s: merchant:<id>, store:<id> or partner:<id>')
      .option('--status <status>', 'pending, approved, refused or expired', 'pending'),
  ).action((o: Connection & { tenant?: string; status: string }) => {
    const query = new URLSearchParams({ status: o.status });
    if (o.tenant) query.set('tenant', o.tenant);
    return call(o, 'GET', `/risk/reviews?${query}`);
  });

  for (const [verb, what] of [
    ['approve', 'a charge is captured, a payout released, an order payable, a change applied'],
    ['refuse', 'a charge is voided, a payout failed, an order canceled, a change dropped'],
  ] as const) {
    withConnection(
      risk
        .command(verb)
        .description(`${verb} what a rule held: ${what}`)
        .argument('<reviewId>', 'the review (tessera risk reviews)'),
    ).action((reviewId: string, o: Connection) =>
      call(o, 'POST', `/risk/reviews/${encodeURIComponent(reviewId)}/${verb}`),
    );
  }
}
