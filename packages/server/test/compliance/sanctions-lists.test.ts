// Sanctions lists (docs/compliance.md) through the admin API: each official format imported from its
// fixture (fixtures/generate-lists.ts writes them in the EU's, the UN's and OFAC's own XML), the same file
// applied once, the EU's next file applied as a diff of versions, bad files refused whole; and screening
// against what was imported, names and digital-currency addresses.
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness } from '../harness/harness.ts';

const fixtures = join(import.meta.dirname, 'fixtures');
const file = (name: string) => readFileSync(join(fixtures, name), 'utf8');
const labelled = JSON.parse(file('screening-labelled.json')) as {
  variants: { query: string; variant: string; dateOfBirth?: string; source: string; sourceId: string }[];
};

interface Import {
  id: string;
  source: string;
  entries: number;
  added: number;
  changed: number;
  removed: number;
  generatedAt: string | null;
  error?: { field?: string; message: string };
}
interface Screened {
  matches: {
    score: number;
    matchedName: string;
    entry: { source: string; sourceId: string; names: string[] };
  }[];
  addressMatches: { source: string; sourceId: string }[];
  error?: { field?: string };
}

let h: Harness;
let inbox: string;
/** The next statement matching this is sent on a connection cut under it: the process died there */
let cutAt: RegExp | undefined;
beforeAll(async () => {
  inbox = await mkdtemp(join(tmpdir(), 'tessera-sanctions-inbox-'));
  h = await Harness.start({
    env: { TESSERA_SANCTIONS_INBOX_DIR: inbox },
    observeStatement: (statement, connection) => {
      if (!cutAt?.test(statement)) return;
      cutAt = undefined;
      connection.destroy();
    },
  });
});
afterAll(async () => {
  await h.close();
});

const importList = (source: string, body: string, contentType = 'application/xml') =>
  h.admin<Import>('POST', `/compliance/sanctions/imports?source=${source}`, {
    body,
    headers: { 'content-type': contentType },
  });
const screen = (json: Record<string, unknown>) => h.admin<Screened>('POST', '/compliance/screen', { json });

describe('sanctions lists', () => {
  it('imports each list from its official format, once, and screens names and addresses against them', async () => {
    for (const [source, name, entries, generatedAt] of [
      ['eu', 'eu-consolidated.xml', 160, '2026-12-01T09:00:00.000Z'],
      ['un', 'un-consolidated.xml', 110, '2026-11-30T23:00:03.913Z'],
      ['ofac', 'ofac-sdn.xml', 160, '2026-12-01T00:00:00.000Z'],
    ] as const) {
      const imported = await importList(source, file(name));
      expect(imported.status, source).toBe(201);
      expect(imported.body).toMatchObject({
        source,
        entries,
        added: entries,
        changed: 0,
        removed: 0,
        generatedAt,
      });
      // The same file again: its first import, nothing applied
      const again = await importList(source, file(name), 'text/xml');
      expect(again.status).toBe(200);
      expect(again.body.id).toBe(imported.body.id);
    }
    // Each import is the operator's action in the audit trail, naming the import
    const audited = await h.admin<{ data: { action: string; objectId: string | null }[] }>(
      'GET',
      '/audit-events?action=sanctions_list.imported',
    );
    expect(audited.body.data.map((a) => a.action)).toContain('sanctions_list.imported');
    const listed = await h.admin<{ data: Import[] }>('GET', '/compliance/sanctions/imports?limit=2');
    expect(listed.body.data.map((i) => i.source)).toEqual(['ofac', 'un']);

    // A variant of a listed name in each way the labelled set writes them finds its entry
    for (const kind of new Set(labelled.variants.map((v) => v.variant))) {
      const variant = labelled.variants.find((v) => v.variant === kind);
      if (!variant) continue;
      const answer = await screen({
        name: variant.query,
        ...(variant.dateOfBirth ? { dateOfBirth: variant.dateOfBirth } : {}),
      });
      expect(answer.status).toBe(200);
      expect(
        answer.body.matches.map((m) => `${m.entry.source}:${m.entry.sourceId}`),
        `${kind}: ${variant.query}`,
      ).toContain(`${variant.source}:${variant.sourceId}`);
    }
    // A name on no list matches nothing; an address OFAC lists matches its entry, in any case for hex
    expect((await screen({ name: 'Margaret Thompson', dateOfBirth: '1971-04-02' })).body.matches).toEqual([]);
    const ofac = file('ofac-sdn.xml');
    const address = /<idNumber>(0x[0-9a-f]{40})<\/idNumber>/.exec(ofac)?.[1] as string;
    const uid = new RegExp(`<uid>(\\d+)</uid>(?:(?!<sdnEntry>)[\\s\\S])*?${address}`).exec(ofac)?.[1];
    const byAddress = await screen({ name: 'Anyone', address: address.toUpperCase().replace('0X', '0x') });
    expect(byAddress.body.addressMatches).toEqual([
      expect.objectContaining({ source: 'ofac', sourceId: uid }),
    ]);
  });

  it('reads OFAC’s CSV files as the same entries as its XML, remarks carried on in sdn_comments.csv', async () => {
    const csv = (name: string) => readFileSync(join(fixtures, 'ofac-csv', name));
    const upload = (parts: [string, Buffer][]) => {
      const form = new FormData();
      for (const [name, bytes] of parts) form.append(name, new Blob([bytes]), name);
      return fetch(`${h.baseUrl}/admin/compliance/sanctions/imports?source=ofac`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.adminToken}` },
        body: form,
      });
    };
    const all: [string, Buffer][] = ['sdn.csv', 'alt.csv', 'add.csv', 'sdn_comments.csv'].map((n) => [
      n,
      csv(n),
    ]);
    // After the XML of the same list (the test above): a new file, and not one entry changed
    const imported = await upload(all);
    expect(imported.status).toBe(201);
    expect(await imported.json()).toMatchObject({
      source: 'ofac',
      entries: 160,
      added: 0,
      changed: 0,
      removed: 0,
    });
    expect((await upload(all)).status).toBe(200);
    // The address whose remark sdn_comments.csv finishes is found whole
    const carried = /^(\d+),"(.*)"/.exec(csv('sdn_comments.csv').toString('utf8'))?.[1] as string;
    const remark = new RegExp(`^${carried},.*Digital Currency Address - [A-Z]+ (\\S+)"$`, 'm').exec(
      csv('sdn.csv').toString('utf8'),
    )?.[1];
    const rest = /"(.*)\."/.exec(csv('sdn_comments.csv').toString('utf8'))?.[1];
    const byAddress = await screen({ name: 'Anyone', address: `${remark}${rest}` });
    expect(byAddress.body.addressMatches).toEqual([expect.objectContaining({ sourceId: carried })]);

    const refused = async (answer: Response) => {
      expect(answer.status).toBe(400);
      return ((await answer.json()) as { error: { field?: string; message: string } }).error;
    };
    expect((await refused(await upload([['alt.csv', csv('alt.csv')]]))).field).toBe('sdn.csv');
    expect(await refused(await upload([['sdn.csv', Buffer.from('not,a,list\n')]]))).toMatchObject({
      field: 'sdn.csv',
      message: expect.stringMatching(/not OFAC's CSV/),
    });
    expect((await refused(await upload([['notes.txt', csv('sdn.csv')]]))).field).toBe('notes.txt');
    const notOfac = await fetch(`${h.baseUrl}/admin/compliance/sanctions/imports?source=un`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.adminToken}` },
      body: (() => {
        const form = new FormData();
        form.append('sdn.csv', new Blob([csv('sdn.csv')]), 'sdn.csv');
        return form;
      })(),
    });
    expect((await refused(notOfac)).message).toMatch(/XML/);
  });

  it('applies a list’s next file as versions: entries added, changed and removed', async () => {
    const first = file('eu-consolidated.xml');
    const next = file('eu-consolidated-next.xml');
    await importList('eu', first);
    const removedId = /logicalId="(\d+)" designationDate/.exec(first)?.[1] as string;
    const removedName = new RegExp(`logicalId="${removedId}"[\\s\\S]*?wholeName="([^"]+)"`).exec(
      first,
    )?.[1] as string;
    expect((await screen({ name: removedName })).body.matches.map((m) => m.entry.sourceId)).toContain(
      removedId,
    );

    const applied = await importList('eu', next);
    expect(applied.status).toBe(201);
    expect(applied.body).toMatchObject({ entries: 160, added: 5, changed: 5, removed: 5 });
    // Removed from the list: no longer matched (every process hears of the import and rebuilds its index)
    expect((await screen({ name: removedName })).body.matches.map((m) => m.entry.sourceId)).not.toContain(
      removedId,
    );
    const versions = await h.services.db
      .selectFrom('sanctions_entries')
      .select(['source_id', 'version', 'closed_by'])
      .where('source', '=', 'eu')
      .where('closed_by', 'is not', null)
      .execute();
    // Five closed as removed, five closed as changed (each with a second version open)
    expect(versions).toHaveLength(10);
    const reopened = await h.services.db
      .selectFrom('sanctions_entries')
      .select('source_id')
      .where('source', '=', 'eu')
      .where('version', '=', 2)
      .where('closed_by', 'is', null)
      .execute();
    expect(reopened).toHaveLength(5);
  });

  it('leaves nothing of an import cut off while its entries were being written, and applies it whole again', async () => {
    const count = async () =>
      Number(
        (
          await h.services.db
            .selectFrom('sanctions_entries')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('source', '=', 'un')
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    // A UN file this test alone imports: the list's entries and another DATAID each
    const body = file('un-consolidated.xml').replace(/<DATAID>(\d+)<\/DATAID>/g, '<DATAID>9$1</DATAID>');
    cutAt = /^insert into "sanctions_entries"/;
    const cut = await importList('un', body);
    expect(cut.status).toBeGreaterThanOrEqual(500);
    expect(cutAt).toBeUndefined();
    expect(await count()).toBe(before);
    const again = await importList('un', body);
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ entries: 110, added: 110, changed: 0 });
    // The file's entries open, the previous file's closed (removed from the list by this one)
    expect(again.body.removed).toBe(before > 0 ? 110 : 0);
  });

  it('refuses a file that is not the list it is said to be, writing nothing', async () => {
    const before = await h.admin<{ data: Import[] }>('GET', '/compliance/sanctions/imports');
    const refused = async (source: string, body: string, field = 'body') => {
      const answer = await importList(source, body);
      expect(answer.status, body.slice(0, 40)).toBe(400);
      expect(answer.body.error?.field).toBe(field);
      return answer.body.error?.message ?? '';
    };
    expect(await refused('un', file('eu-consolidated.xml'))).toMatch(/root element is <export>/);
    expect(await refused('ofac', '<sdnList><sdnEntry><uid>1</uid>')).toMatch(/not well-formed/);
    expect(await refused('eu', '<export><sanctionEntity logicalId="7"/></export>')).toMatch(
      /entry 1 has no name/,
    );
    expect(await refused('eu', '   ')).toMatch(/list file/);
    expect(await refused('nato', file('un-consolidated.xml'), 'source')).toBeTruthy();
    const after = await h.admin<{ data: Import[] }>('GET', '/compliance/sanctions/imports');
    expect(after.body.data).toEqual(before.body.data);
    // A screening's own bad input
    expect((await screen({ name: '' })).body.error?.field).toBe('name');
    expect((await screen({ name: 'A B', dateOfBirth: '12/01/1970' })).body.error?.field).toBe('dateOfBirth');
    expect((await screen({ name: 'A B', country: 'Russia' })).body.error?.field).toBe('country');
    expect((await screen({ name: 'A B', threshold: 2 })).body.error?.field).toBe('threshold');
    expect((await screen({ name: 'A B', nickname: 'x' })).status).toBe(400);
  });
});

describe('the inbox folder', () => {
  it('imports each list file dropped into it once, whoever’s list it is, and rejects one that is not a list, saying why', async () => {
    // The UN's file with ids of its own (DATAID 8…): a file no other test imports
    const body = file('un-consolidated.xml').replace(/<DATAID>(\d+)<\/DATAID>/g, '<DATAID>8$1</DATAID>');
    await writeFile(join(inbox, 'consolidated.xml'), body);
    await writeFile(
      join(inbox, 'notes.xml'),
      '<?xml version="1.0"?>\n<notes><note>not a list</note></notes>',
    );
    await writeFile(join(inbox, 'readme.txt'), 'left alone: not XML');
    const swept = await h.advanceClock(1);
    expect(swept.processed['sanctions-inbox']).toBe(1);
    const [latest] = (
      await h.admin<{ data: (Import & { importedBy: string })[] }>('GET', '/compliance/sanctions/imports')
    ).body.data;
    expect(latest).toMatchObject({ source: 'un', entries: 110, importedBy: 'inbox' });
    expect(await readdir(join(inbox, 'processed'))).toEqual(['consolidated.xml']);
    expect(await readdir(join(inbox, 'rejected'))).toEqual(['notes.xml', 'notes.xml.reason']);
    expect(await readFile(join(inbox, 'rejected', 'notes.xml.reason'), 'utf8')).toMatch(
      /root element is <notes>/,
    );
    expect(await readdir(inbox)).toEqual(expect.arrayContaining(['readme.txt']));
    // Dropped again: applied once, moved on
    await writeFile(join(inbox, 'consolidated-again.xml'), body);
    expect((await h.advanceClock(1)).processed['sanctions-inbox']).toBe(0);
    const [still] = (await h.admin<{ data: Import[] }>('GET', '/compliance/sanctions/imports')).body.data;
    expect(still?.id).toBe(latest?.id);
    expect(await readdir(join(inbox, 'processed'))).toEqual(['consolidated-again.xml', 'consolidated.xml']);
  });

  it('imports OFAC’s CSV files dropped together as a folder, and rejects a loose one, saying why', async () => {
    const csv = (name: string) => readFileSync(join(fixtures, 'ofac-csv', name), 'utf8');
    // The fixture's list with one more entry (a copy of the first under a uid of its own)
    const sdn = csv('sdn.csv');
    const first = sdn.split('\n')[0] as string;
    const added = first.replace(/^\d+,"[^"]*"/, '99000001,"NEWLY LISTED, Person"');
    const staging = await mkdtemp(join(tmpdir(), 'ofac-set-'));
    await writeFile(join(staging, 'sdn.csv'), `${sdn.trimEnd()}\n${added}\n`);
    for (const name of ['alt.csv', 'add.csv', 'sdn_comments.csv'])
      await writeFile(join(staging, name), csv(name));
    // Moved in whole, as the docs ask (one rename on the same filesystem)
    await rename(staging, join(inbox, 'ofac-2026-12-04'));
    await writeFile(join(inbox, 'alt.csv'), csv('alt.csv'));
    expect((await h.advanceClock(1)).processed['sanctions-inbox']).toBe(1);
    const [latest] = (
      await h.admin<{ data: (Import & { importedBy: string })[] }>('GET', '/compliance/sanctions/imports')
    ).body.data;
    expect(latest).toMatchObject({ source: 'ofac', entries: 161, added: 1, importedBy: 'inbox' });
    expect(await readdir(join(inbox, 'processed'))).toContain('ofac-2026-12-04');
    expect(await readFile(join(inbox, 'rejected', 'alt.csv.reason'), 'utf8')).toMatch(
      /in a folder of their own/,
    );
    // A folder without its sdn.csv is rejected whole, with the reason beside it
    await mkdir(join(inbox, 'half-a-set'));
    await writeFile(join(inbox, 'half-a-set', 'alt.csv'), csv('alt.csv'));
    expect((await h.advanceClock(1)).processed['sanctions-inbox']).toBe(0);
    expect(await readFile(join(inbox, 'rejected', 'half-a-set.reason'), 'utf8')).toMatch(/needs its sdn.csv/);
    // A folder holding another folder is rejected too (the sweep goes on with the rest)
    await mkdir(join(inbox, 'nested', 'more'), { recursive: true });
    await writeFile(join(inbox, 'nested', 'sdn.csv'), sdn);
    expect((await h.advanceClock(1)).processed['sanctions-inbox']).toBe(0);
    expect(await readFile(join(inbox, 'rejected', 'nested.reason'), 'utf8')).toMatch(/more is not one of/);
  });
});
