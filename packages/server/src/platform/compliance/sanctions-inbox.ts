// Sanctions list files dropped into a folder (docs/compliance.md, Importing): TESSERA_SANCTIONS_INBOX_DIR
// is read by the `sanctions-inbox` sweep, as the bank's inbox is. Whose list a file is comes from its own
// root element (the EU's `export`, the UN's `CONSOLIDATED_LIST`, OFAC's `sdnList`), so a file is dropped as
// downloaded. Each is imported as the admin API imports one — once by its content hash, in one
// transaction — then moved to processed/; one that is not a list goes to rejected/ with a `.reason`
// file beside it saying why. Either way it is logged.
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { ListFormatError, type SanctionsSource } from './sanctions-entry.ts';
import type { SanctionsLists } from './sanctions-lists.ts';

const ROOTS: Record<string, SanctionsSource> = { export: 'eu', CONSOLIDATED_LIST: 'un', sdnList: 'ofac' };

/** Whose list the XML is, by its root element (after the declaration, comments and a doctype) */
export function sourceOf(xml: string): SanctionsSource {
  const root = /^\s*(?:<\?[\s\S]*?\?>\s*|<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<(?:[\w.-]+:)?([\w.-]+)/.exec(
    xml.replace(/^\uFEFF/, ''),
  )?.[1];
  const source = root === undefined ? undefined : ROOTS[root];
  if (!source) {
    throw new ListFormatError(
      `not a sanctions list this platform reads: its root element is ${root ? `<${root}>` : 'missing'} (the EU's <export>, the UN's <CONSOLIDATED_LIST> or OFAC's <sdnList>)`,
    );
  }
  return source;
}

export class SanctionsInbox {
  constructor(
    private readonly deps: { db: Db; sanctions: SanctionsLists; logger: Logger; inboxDir: string },
  ) {}

  /** Imports every file waiting; answers how many were applied (a file imported before counts 0) */
  async collect(): Promise<number> {
    const { inboxDir } = this.deps;
    await mkdir(inboxDir, { recursive: true });
    const names = (await readdir(inboxDir, { withFileTypes: true }))
      .filter((entry) => entry.isFile() && entry.name.toLowerCase().endsWith('.xml'))
      .map((entry) => entry.name)
      .sort();
    let applied = 0;
    for (const name of names) applied += await this.readOne(name);
    return applied;
  }

  private async readOne(name: string): Promise<number> {
    const { inboxDir, logger } = this.deps;
    const body = await readFile(join(inboxDir, name), 'utf8');
    try {
      const source = sourceOf(body);
      const done = await this.deps.sanctions.import(this.deps.db, source, body, 'inbox');
      await moveTo(inboxDir, 'processed', name);
      logger.info(
        { listFile: name, source, importId: done.import.id, applied: done.applied },
        done.applied ? 'sanctions list imported' : 'sanctions list already imported',
      );
      return done.applied ? 1 : 0;
    } catch (err) {
      if (!(err instanceof ListFormatError)) throw err;
      await moveTo(inboxDir, 'rejected', name);
      await writeFile(join(inboxDir, 'rejected', `${name}.reason`), `${err.message}\n`);
      logger.warn({ listFile: name, reason: err.message }, 'sanctions list file rejected');
      return 0;
    }
  }
}

async function moveTo(inboxDir: string, folder: 'processed' | 'rejected', name: string): Promise<void> {
  await mkdir(join(inboxDir, folder), { recursive: true });
  await rename(join(inboxDir, name), join(inboxDir, folder, name));
}
