// `npm run bench:screening`: one screening against lists the size of the real ones (docs/compliance.md,
// How matching is measured). The three fixtures' entries (fixtures/generate-lists.ts) and, beside them,
// BENCH_SCREENING_ENTRIES more invented entries (default 15,000: the EU's, the UN's and OFAC's lists hold
// some 5,000, 1,000 and 18,000, each with aliases) made of the same name pools, so the index holds tens
// of thousands of names that share tokens with what is screened; then every name of the labelled set is
// screened, and the time per screening printed (mean, p50, p99), with the set's recall and false positives.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../packages/server/src/config.ts';
import type { ListEntry } from '../packages/server/src/platform/compliance/sanctions-entry.ts';
import { readEuList } from '../packages/server/src/platform/compliance/sanctions-eu.ts';
import { readOfacList } from '../packages/server/src/platform/compliance/sanctions-ofac.ts';
import { readUnList } from '../packages/server/src/platform/compliance/sanctions-un.ts';
import { ScreeningIndex } from '../packages/server/src/platform/compliance/screening-index.ts';
import * as pools from '../packages/server/test/compliance/fixtures/name-pools.ts';

const fixtures = join(import.meta.dirname, '../packages/server/test/compliance/fixtures');
const file = (name: string) => readFileSync(join(fixtures, name), 'utf8');
const EXTRA = Number(process.env.BENCH_SCREENING_ENTRIES ?? 15_000);

let seed = 7;
const random = () => {
  seed = (seed * 16807) % 2147483647;
  return seed / 2147483647;
};
const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
const given = [...pools.RUSSIAN_GIVEN, ...pools.ARABIC_GIVEN, ...pools.GREEK_GIVEN, ...pools.LATIN_GIVEN];
const surnames = [
  ...pools.RUSSIAN_SURNAMES,
  ...pools.ARABIC_SURNAMES,
  ...pools.GREEK_SURNAMES,
  ...pools.LATIN_SURNAMES,
];
const labelled = JSON.parse(file('screening-labelled.json')) as {
  variants: { query: string; dateOfBirth?: string; source: string; sourceId: string }[];
  unlisted: { query: string; dateOfBirth?: string; kind: string }[];
};
// Names never screened as unlisted, so the extra entries do not turn the unlisted set into listed names
const screened = new Set(labelled.unlisted.map((u) => u.query.toLowerCase()));

const lists = [
  readEuList(file('eu-consolidated.xml')),
  readUnList(file('un-consolidated.xml')),
  readOfacList(file('ofac-sdn.xml')),
];
const entries = lists.flatMap((l) =>
  l.entries.map((entry) => ({ id: `${l.source}:${entry.sourceId}`, source: l.source, entry })),
);
for (let i = 0; entries.length < EXTRA + 430; i++) {
  // Three tokens each (a given name, a second given name or patronymic, a surname): never a two-token name
  // that could be one of the unlisted set's
  const name = [pick(given).latin, pick([...given, ...pools.PATRONYMICS]).latin, pick(surnames).latin];
  if (screened.has(`${name[0]} ${name[2]}`.toLowerCase())) continue;
  const entry: ListEntry = {
    sourceId: `x${i}`,
    kind: 'person',
    names: [
      { name: name.join(' '), strong: true },
      { name: `${name[2]} ${name[0]} ${name[1]}`.toUpperCase(), strong: true },
      { name: `${name[0]} ${name[2]}-${pick(surnames).latin}`, strong: false },
    ],
    birthDates: [`${1940 + Math.floor(random() * 50)}`],
    nationalities: [],
    addresses: [],
    cryptoAddresses: [],
    programs: [],
    reference: null,
    listedOn: null,
  };
  entries.push({ id: `x:${i}`, source: 'ofac', entry });
}
const built = performance.now();
const index = new ScreeningIndex(entries);
const buildMs = performance.now() - built;
const threshold = parseConfig({}).screeningThreshold;
const times: number[] = [];
let found = 0;
let falsePositives = 0;
const ordinary = labelled.unlisted.filter((u) => u.kind === 'ordinary customer');
for (const round of [0, 1]) {
  for (const v of labelled.variants) {
    const t = performance.now();
    const matches = index.screen({ name: v.query, dateOfBirth: v.dateOfBirth }, threshold);
    if (round === 1) times.push(performance.now() - t);
    if (round === 1 && matches.some((m) => m.entry.id === `${v.source}:${v.sourceId}`)) found++;
  }
  for (const u of labelled.unlisted) {
    const t = performance.now();
    const matches = index.screen({ name: u.query, dateOfBirth: u.dateOfBirth }, threshold);
    if (round === 1) times.push(performance.now() - t);
    if (round === 1 && matches.length > 0 && u.kind === 'ordinary customer') falsePositives++;
  }
}
times.sort((a, b) => a - b);
const at = (q: number) => (times[Math.floor(q * (times.length - 1))] ?? 0).toFixed(3);
process.stdout.write(
  `${entries.length.toLocaleString('en')} entries, ${index.size.toLocaleString('en')} names indexed in ${buildMs.toFixed(0)} ms\n` +
    `screening (threshold ${threshold}): mean ${(times.reduce((a, b) => a + b, 0) / times.length).toFixed(3)} ms, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms\n` +
    // The extra entries are made of the same pools as the unlisted set's recombined names (and hold most of
    // those combinations, with a middle name): those are listed names here, so only ordinary customers count
    `labelled set: recall ${(found / labelled.variants.length).toFixed(4)}, false positives among ${ordinary.length.toLocaleString('en')} ordinary customers ${(falsePositives / ordinary.length).toFixed(4)}\n`,
);
