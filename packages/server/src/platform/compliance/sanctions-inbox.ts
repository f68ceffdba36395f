// Sanctions list files dropped into a folder (docs/compliance.md, Importing): TESSERA_SANCTIONS_INBOX_DIR
// is read by the `sanctions-inbox` sweep, as the bank's inbox is. Whose list a file is comes from its own
// root element (the EU's `export`, the UN's `CONSOLIDATED_LIST`, OFAC's `sdnList`), so a file is dropped as
// downloaded. OFAC's CSV files are one list in four files, so they come as a folder holding them (moved
// in whole, so the sweep never reads half of a set). Each is imported as the admin API imports one — once
// by its content hash, in one transaction — then moved to processed/; one that is not a list goes to
// rejected/ with a `.reason` file beside it saying why. Either way it is logged.
import { access, mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { ListFormatError, type SanctionsSource } from './sanctions-entry.ts';
import type { SanctionsLists } from './sanctions-lists.ts';
import { OFAC_CSV_FILES, type OfacCsvFiles } from './sanctions-ofac-csv.ts';

/** What the inbox keeps for itself */
const OWN_FOLDERS = new Set(['processed', 'rejected']);

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
    const entries = (await readdir(inboxDir, { withFileTypes: true })).sort((a, b) =>
      a.name < b.name ? -1 : 1,
    );
    let applied = 0;
    for (const entry of entries) {
      const lower = entry.name.toLowerCase();
      if (entry.isFile() && lower.endsWith('.xml')) applied += await this.readOne(entry.name, 'xml');
      else if (entry.isFile() && lower.endsWith('.csv')) await this.reject(entry.name, LOOSE_CSV);
      else if (entry.isDirectory() && !OWN_FOLDERS.has(entry.name))
        applied += await this.readOne(entry.name, 'ofac-csv');
    }
    return applied;
  }

  private async readOne(name: string, shape: 'xml' | 'ofac-csv'): Promise<number> {
    const { inboxDir, logger } = this.deps;
    try {
      const [source, body] =
        shape === 'xml'
          ? await readFile(join(inboxDir, name), 'utf8').then((xml) => [sourceOf(xml), xml] as const)
          : (['ofac', await readCsvSet(join(inboxDir, name))] as const);
      const done = await this.deps.sanctions.import(this.deps.db, source, body, 'inbox');
      await moveTo(inboxDir, 'processed', name);
      logger.info(
        { listFile: name, source, importId: done.import.id, applied: done.applied },
        done.applied ? 'sanctions list imported' : 'sanctions list already imported',
      );
      return done.applied ? 1 : 0;
    } catch (err) {
      if (!(err instanceof ListFormatError)) throw err;
      await this.reject(name, err.message);
      return 0;
    }
  }

  private async reject(name: string, reason: string): Promise<void> {
    const { inboxDir, logger } = this.deps;
    const moved = await moveTo(inboxDir, 'rejected', name);
    await writeFile(join(inboxDir, 'rejected', `${moved}.reason`), `${reason}\n`);
    logger.warn({ listFile: name, reason }, 'sanctions list file rejected');
  }
}

const LOOSE_CSV =
  "OFAC's CSV files are one list: drop sdn.csv with alt.csv, add.csv and sdn_comments.csv together, in a folder of their own moved into the inbox whole";

/** A folder's OFAC CSV files, each by its name (sdn.csv required); any other file in it is a mistake */
async function readCsvSet(dir: string): Promise<OfacCsvFiles> {
  const files: Partial<OfacCsvFiles> = {};
  for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  )) {
    const { name } = entry;
    const part = entry.isFile() ? OFAC_CSV_FILES[name.toLowerCase()] : undefined;
    if (!part)
      throw new ListFormatError(
        `${name} is not one of OFAC's CSV files (sdn.csv, alt.csv, add.csv, sdn_comments.csv)`,
      );
    files[part] = await readFile(join(dir, name), 'utf8');
  }
  if (files.sdn === undefined) throw new ListFormatError("a folder of OFAC's CSV files needs its sdn.csv");
  return files as OfacCsvFiles;
}

/** Moves a file or folder into processed/ or rejected/, under a name not taken there yet; answers it */
async function moveTo(inboxDir: string, folder: 'processed' | 'rejected', name: string): Promise<string> {
  await mkdir(join(inboxDir, folder), { recursive: true });
  let target = name;
  for (let n = 2; await exists(join(inboxDir, folder, target)); n++) target = `${name}.${n}`;
  await rename(join(inboxDir, name), join(inboxDir, folder, target));
  return target;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );
