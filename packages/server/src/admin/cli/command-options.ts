// What the command line's commands share: the parsers of their options' values, and the context an
// action runs in. Here, below the CLI, so the commands can live beside what they drive.
import { InvalidArgumentError, Option } from 'commander';
import type { Config } from '../../config.ts';

/** What a command's action is run with (cli/program.ts gives it) */
export interface CommandContext {
  /** Runs an action and settles the process with its outcome (an exit code) */
  run: (work: () => Promise<number>) => () => Promise<void>;
  /** Prints a value as indented JSON on stdout */
  print: (value: unknown) => void;
  loadConfig: () => Promise<Config>;
}

export const collect = (value: string, previous: string[]) => [...previous, value];
export const positiveInt = (name: string) => (value: string) => {
  const n = Number(value);
  if (!/^\d{1,10}$/.test(value) || n <= 0)
    throw new InvalidArgumentError(`${name} must be a positive whole number`);
  return n;
};
export const nonNegativeInt = (name: string) => (value: string) => {
  if (!/^\d{1,6}$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number`);
  return Number(value);
};
export const seconds = (value: string) => {
  const n = Number(value);
  if (!/^\d{1,7}$/.test(value) || n > 30 * 86_400)
    throw new InvalidArgumentError('must be 0 to 2592000 seconds');
  return n;
};
export const API = new Option('--api <api>', 'only this API’s events').choices([
  'issuing',
  'payments',
  'crypto',
]);
/** A site or store named on the command line */
export const TENANT_OPTION = '--tenant <site:ID|store:ID>';
