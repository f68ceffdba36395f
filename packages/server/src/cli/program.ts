// The `tessera` command line (commander): what each command and option is, and its help. Exit codes:
// 0 done; 1 it failed (the reason in one line on stderr, with its fix when there is one); 2 a usage
// mistake (unknown command or option, missing argument), answered with the help. `serve` keeps running.
import { Command, CommanderError } from 'commander';
import { addAdminCommands } from '../admin/cli/admin-commands.ts';
import { AdminUsageError } from '../admin/cli/admin-usage-error.ts';
import { positiveInt } from '../admin/cli/command-options.ts';
import type { Config } from '../config.ts';
import { ConfigError } from '../config-error.ts';
import { TESSERA_VERSION } from '../version.ts';
import { addComplianceCommands } from './compliance-commands.ts';
import { describeFailure } from './describe-failure.ts';
import { addRiskCommands } from './risk-commands.ts';
import { addSanctionsCommands } from './sanctions-commands.ts';
import { addServerCommands } from './server-commands.ts';

// Each command loads what it drives when it runs: `--version`, `--help` and the commands that speak to a
// running server load neither the server nor the database (bench/cli.ts measures them).
const lifecycle = () => import('./lifecycle-commands.ts');
const adminCli = () => import('../admin/cli/admin-cli.ts');
const loadConfig = async (): Promise<Config> => (await import('../config.ts')).parseConfig(process.env);

/** What an action answers: an exit code, or `running` for a server that stays up. */
export type Outcome = number | 'running';

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

  addAdminCommands(program, { run, print, loadConfig });
  addServerCommands(program, { run, print, loadConfig });
  addRiskCommands(program, { run, print, loadConfig });
  addSanctionsCommands(program, { run, print, loadConfig });
  addComplianceCommands(program, { run, print, loadConfig });

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
