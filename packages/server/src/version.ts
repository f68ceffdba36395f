// The server's version, from its package manifest (one source of truth for the CLI and the landing page).
import { readFileSync } from 'node:fs';

export const TESSERA_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
