// How the CLI tells a failure in one line, with its fix when there is one (its own module: loaded on
// every run, so it names errors by their name rather than importing their classes).
import { CliError } from './server-connection.ts';

/** Errors whose message already says what to do. */
const EXPLAINED = new Set(['EmbeddedPostgresError', 'ConnectionBudgetError']);

export function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return `failed: ${String(err)}`;
  if (err instanceof CliError) return err.message;
  const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
  if (debug && err.stack) return err.stack;
  const code = (err as NodeJS.ErrnoException).code;
  const hint = EXPLAINED.has(err.name)
    ? ''
    : code === 'EADDRINUSE'
      ? '\n  Fix: another program uses this port; set PORT to a free one (PORT=0 picks one)'
      : code === 'EACCES'
        ? '\n  Fix: this user may not use that file or port; check TESSERA_DATA_DIR and PORT'
        : code === 'ECONNREFUSED'
          ? '\n  Fix: the database does not answer; check DATABASE_URL and that Postgres runs'
          : '\n  (LOG_LEVEL=debug shows where it failed)';
  return `${err.message}${hint}`;
}
