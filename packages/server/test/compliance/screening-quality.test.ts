// How well screening matches (docs/compliance.md, How matching is measured): the labelled set of
// fixtures/generate-lists.ts — 340 variants of listed names (misspelled, swapped, a middle name left out,
// written in Cyrillic, Arabic or Greek script, spelled another way, with an honorific and in capitals,
// companies without their legal form or misspelled) and 5,000 names on no list (ordinary customers, and
// listed given names and surnames recombined) — screened against the three lists' fixtures at the
// default threshold: recall at least 0.98, false positives at most 1 %.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { readEuList } from '../../src/platform/compliance/sanctions-eu.ts';
import { readOfacList } from '../../src/platform/compliance/sanctions-ofac.ts';
import { readUnList } from '../../src/platform/compliance/sanctions-un.ts';
import { ScreeningIndex } from '../../src/platform/compliance/screening-index.ts';

const fixtures = join(import.meta.dirname, 'fixtures');
const file = (name: string) => readFileSync(join(fixtures, name), 'utf8');

describe('screening against the lists', () => {
  it('finds ≥ 98 % of listed names’ variants with ≤ 1 % of unlisted names matched, at the default threshold', () => {
    const lists = [
      readEuList(file('eu-consolidated.xml')),
      readUnList(file('un-consolidated.xml')),
      readOfacList(file('ofac-sdn.xml')),
    ];
    const index = new ScreeningIndex(
      lists.flatMap((l) =>
        l.entries.map((entry) => ({ id: `${l.source}:${entry.sourceId}`, source: l.source, entry })),
      ),
    );
    const { variants, unlisted } = JSON.parse(file('screening-labelled.json')) as {
      variants: {
        query: string;
        variant: string;
        dateOfBirth?: string;
        country?: string;
        source: string;
        sourceId: string;
      }[];
      unlisted: { query: string; dateOfBirth?: string }[];
    };
    const threshold = parseConfig({}).screeningThreshold;
    const missed = variants.filter(
      (v) =>
        !index
          .screen({ name: v.query, dateOfBirth: v.dateOfBirth, country: v.country }, threshold)
          .some((m) => m.entry.id === `${v.source}:${v.sourceId}`),
    );
    const matched = unlisted.filter(
      (u) => index.screen({ name: u.query, dateOfBirth: u.dateOfBirth }, threshold).length > 0,
    );
    const recall = 1 - missed.length / variants.length;
    const falsePositives = matched.length / unlisted.length;
    expect(variants.length).toBeGreaterThanOrEqual(200);
    expect(unlisted.length).toBe(5000);
    expect(recall, missed.map((v) => `${v.variant}: ${v.query}`).join('\n')).toBeGreaterThanOrEqual(0.98);
    expect(
      falsePositives,
      matched
        .slice(0, 20)
        .map((u) => u.query)
        .join('\n'),
    ).toBeLessThanOrEqual(0.01);
  });

  it('reads each format’s facts: aliases, original script, dates of birth, nationalities, crypto addresses', () => {
    const eu = readEuList(file('eu-consolidated.xml'));
    const un = readUnList(file('un-consolidated.xml'));
    const ofac = readOfacList(file('ofac-sdn.xml'));
    const person = (entries: typeof eu.entries) =>
      entries.find((e) => e.kind === 'person' && e.names.length > 1);
    for (const entry of [person(eu.entries), person(un.entries), person(ofac.entries)]) {
      expect(entry?.birthDates[0]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(entry?.nationalities[0]).toMatch(/^[A-Z]{2}$/);
      expect(entry?.addresses[0]?.country).toMatch(/^[A-Z]{2}$/);
    }
    // Names in their own script (the UN's NAME_ORIGINAL_SCRIPT, the EU's nameAlias with a nameLanguage)
    for (const entries of [eu.entries, un.entries]) {
      expect(entries.some((e) => e.names.some((n) => /[\u0400-\u04ff]/.test(n.name)))).toBe(true);
      expect(entries.some((e) => e.names.some((n) => /[\u0600-\u06ff]/.test(n.name)))).toBe(true);
    }
    expect(un.entries.some((e) => e.names.some((n) => !n.strong))).toBe(true);
    const withAddresses = ofac.entries.filter((e) => e.cryptoAddresses.length > 0);
    expect(withAddresses).toHaveLength(24);
    expect(withAddresses.every((e) => /^(XBT|ETH|USDT)$/.test(e.cryptoAddresses[0]?.currency ?? ''))).toBe(
      true,
    );
    expect(ofac.entries.filter((e) => e.kind === 'entity')).toHaveLength(40);
  });
});
