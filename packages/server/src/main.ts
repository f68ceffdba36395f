// The one binary, `tessera`: its commands and options are in cli/program.ts (`tessera --help`).
import { runCli } from './cli/program.ts';

const outcome = await runCli(process.argv.slice(2));
if (outcome !== 'running') process.exit(outcome);
