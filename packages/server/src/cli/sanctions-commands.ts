// `tessera sanctions …` (docs/compliance.md, Importing): a sanctions list file imported into the running
// server, and its imports listed — each one call of the admin API, so it is checked, applied once and
// audited exactly as through the API. Whose list a file is may be said (--source) or read from the file.
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { AdminUsageError } from '../admin/cli/admin-usage-error.ts';
import type { CommandContext } from '../admin/cli/command-options.ts';
import { ListFormatError, SANCTIONS_SOURCES } from '../platform/compliance/sanctions-entry.ts';
import { sourceOf } from '../platform/compliance/sanctions-inbox.ts';
import { OFAC_CSV_FILES } from '../platform/compliance/sanctions-ofac-csv.ts';
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
      .argument(
        '<files...>',
        'the EU’s FSF XML, the UN’s consolidated XML or OFAC’s sdn.xml, as downloaded; or OFAC’s CSV files (sdn.csv, alt.csv, add.csv, sdn_comments.csv)',
      )
      .option(
        '--source <source>',
        `whose list it is: ${SANCTIONS_SOURCES.join(', ')} (default: read from the file)`,
      ),
  ).action((files: string[], o: Connection & { source?: string }) =>
    run(async () => {
      if (o.source !== undefined && !(SANCTIONS_SOURCES as readonly string[]).includes(o.source)) {
        throw new AdminUsageError(`--source is ${SANCTIONS_SOURCES.join(', ')}`);
      }
      if (files.some((f) => f.endsWith('.csv'))) {
        // OFAC's CSV files, sent together as the parts of one import
        if ((o.source ?? 'ofac') !== 'ofac')
          throw new AdminUsageError('CSV files are OFAC’s list: --source ofac');
        const form = new FormData();
        for (const f of files) {
          const name = basename(f);
          if (!OFAC_CSV_FILES[name])
            throw new AdminUsageError(`${f}: OFAC’s CSV files are ${Object.keys(OFAC_CSV_FILES).join(', ')}`);
          form.append(name, new Blob([await readFile(f)]), name);
        }
        const connection = await connect(await loadConfig(), o);
        print(await adminUpload(connection, '/compliance/sanctions/imports?source=ofac', { form }));
        return 0;
      }
      const [file = ''] = files;
      if (files.length > 1)
        throw new AdminUsageError('one list file at a time (or OFAC’s CSV files together)');
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
