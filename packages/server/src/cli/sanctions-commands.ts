// `tessera sanctions …` (docs/compliance.md, Importing): a sanctions list file imported into the running
// server, and its imports listed — each one call of the admin API, so it is checked, applied once and
// audited exactly as through the API. Whose list a file is may be said (--source) or read from the file.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AdminUsageError } from '../admin/cli/admin-usage-error.ts';
import type { CommandContext } from '../admin/cli/command-options.ts';
import { ListFormatError, SANCTIONS_SOURCES } from '../platform/compliance/sanctions-entry.ts';
import { sourceOf } from '../platform/compliance/sanctions-inbox.ts';
import {
  adminRequest,
  adminUpload,
  type ConnectionOptions,
  connect,
  withConnection,
} from './server-connection.ts';

type Connection = ConnectionOptions;

export function addSanctionsCommands(program: Command, { run, print, loadConfig }: CommandContext): void {
  const sanctions = program
    .command('sanctions')
    .description('the sanctions lists of the running server (docs/compliance.md), as JSON');

  withConnection(
    sanctions
      .command('import')
      .description(
        'import a list from its official file: applied once, its entries versioned, everyone re-screened',
      )
      .argument('<file>', 'the EU’s FSF XML, the UN’s consolidated XML or OFAC’s sdn.xml, as downloaded')
      .option(
        '--source <source>',
        `whose list it is: ${SANCTIONS_SOURCES.join(', ')} (default: read from the file)`,
      ),
  ).action((file: string, o: Connection & { source?: string }) =>
    run(async () => {
      if (o.source !== undefined && !(SANCTIONS_SOURCES as readonly string[]).includes(o.source)) {
        throw new AdminUsageError(`--source is ${SANCTIONS_SOURCES.join(', ')}`);
      }
      const text = await readFile(file, 'utf8');
      let source = o.source;
      try {
        source ??= sourceOf(text);
      } catch (err) {
        if (err instanceof ListFormatError) throw new AdminUsageError(`${file}: ${err.message}`);
        throw err;
      }
      const connection = await connect(await loadConfig(), o);
      print(
        await adminUpload(connection, `/compliance/sanctions/imports?source=${source}`, {
          text,
          contentType: 'application/xml',
        }),
      );
      return 0;
    })(),
  );

  withConnection(sanctions.command('imports').description('the imports, newest first')).action(
    (o: Connection) =>
      run(async () => {
        print(
          await adminRequest(await connect(await loadConfig(), o), 'GET', '/compliance/sanctions/imports'),
        );
        return 0;
      })(),
  );
}
