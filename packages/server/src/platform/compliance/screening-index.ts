// The lists' names held in memory as an index of keys (docs/compliance.md, Screening), so a screening looks
// up a few keys instead of scanning every name: each listed token is filed under its consonant skeleton
// and the skeleton with any one letter left out, so a misspelled, transliterated or differently vowelled
// token finds it (one changed consonant, or none). Only the names sharing keys with two of the screened
// tokens (one, for a one-token name) are then compared whole (name-matching.ts) and the best name of each
// entry scored, its date of birth and country weighing for or against it.
import { nameSimilarity, nameTokens, skeleton, tokenSimilarity } from './name-matching.ts';
import type { ListEntry, SanctionsSource } from './sanctions-entry.ts';

export interface IndexedEntry {
  /** The entry's row (one version of it) */
  id: string;
  source: SanctionsSource;
  entry: ListEntry;
}

export interface ScreenedParty {
  name: string;
  /** `YYYY-MM-DD` or `YYYY` */
  dateOfBirth?: string | undefined;
  /** ISO 3166 alpha-2: nationality or residence */
  country?: string | undefined;
}

export interface ScreeningMatch {
  entry: IndexedEntry;
  /** The listed name that matched best */
  matchedName: string;
  /** 0–1: the names' likeness, moved by the date of birth and the country */
  score: number;
  nameScore: number;
}

/** What a match shows of the entry version it matched (the screening's answer, an alert's evidence) */
export function entrySummary(indexed: IndexedEntry) {
  const { entry } = indexed;
  return {
    id: indexed.id,
    source: indexed.source,
    sourceId: entry.sourceId,
    kind: entry.kind,
    names: entry.names.map((n) => n.name),
    birthDates: entry.birthDates,
    nationalities: entry.nationalities,
    programs: entry.programs,
    reference: entry.reference,
  };
}

interface IndexedName {
  entry: number;
  name: string;
  tokens: string[];
}

export class ScreeningIndex {
  /** Key → the distinct listed tokens filed under it */
  private readonly keys = new Map<string, number[]>();
  private readonly tokens: string[] = [];
  private readonly tokenIds = new Map<string, number>();
  /** Token → the names holding it */
  private readonly postings: number[][] = [];
  private readonly names: IndexedName[] = [];
  private readonly addresses = new Map<string, number[]>();

  constructor(readonly entries: readonly IndexedEntry[]) {
    for (const [e, { entry }] of entries.entries()) {
      for (const { name } of entry.names) {
        const tokens = nameTokens(name);
        if (tokens.length === 0) continue;
        const at = this.names.push({ entry: e, name, tokens }) - 1;
        for (const token of new Set(tokens)) {
          let id = this.tokenIds.get(token);
          if (id === undefined) {
            id = this.tokens.push(token) - 1;
            this.tokenIds.set(token, id);
            this.postings.push([]);
            for (const key of keysOf(token)) push(this.keys, key, id);
          }
          (this.postings[id] as number[]).push(at);
        }
      }
      for (const { address } of entry.cryptoAddresses) push(this.addresses, addressKey(address), e);
    }
  }

  get size(): number {
    return this.names.length;
  }

  /** How many names hold the token (its postings: a name holds each of its tokens once) */
  private holding(token: string): number {
    const id = this.tokenIds.get(token);
    return id === undefined ? 0 : (this.postings[id]?.length ?? 0);
  }

  /** The entries whose names match the party's at or above `threshold`, best first */
  screen(party: ScreenedParty, threshold: number): ScreeningMatch[] {
    const tokens = nameTokens(party.name);
    if (tokens.length === 0) return [];
    // The lists' names share their tokens: each pair of tokens is compared once a screening
    const compared = new Map<string, number>();
    const similarity = (a: string, b: string) => {
      const key = `${a} ${b}`;
      let alike = compared.get(key);
      if (alike === undefined) {
        alike = tokenSimilarity(a, b);
        compared.set(key, alike);
      }
      return alike;
    };
    // The listed tokens sharing a key with each screened token and alike enough to count (TOKEN_FLOOR),
    // then the names holding them: which of the screened tokens each name meets (a bit per token)
    const hits = new Map<number, number>();
    for (const [t, token] of tokens.slice(0, 30).entries()) {
      const alike = new Set<number>();
      for (const key of keysOf(token)) for (const id of this.keys.get(key) ?? []) alike.add(id);
      for (const id of alike) {
        if (similarity(token, this.tokens[id] as string) < TOKEN_FLOOR) continue;
        for (const at of this.postings[id] ?? []) hits.set(at, (hits.get(at) ?? 0) | (1 << t));
      }
    }
    const weight = (token: string) => Math.log(1 + this.names.length / (1 + this.holding(token)));
    const best = new Map<number, ScreeningMatch>();
    const needed = (name: IndexedName) => Math.min(2, tokens.length, name.tokens.length);
    for (const [at, seen] of hits) {
      const name = this.names[at] as IndexedName;
      if (bits(seen) < needed(name)) continue;
      const nameScore = nameSimilarity(tokens, name.tokens, weight, similarity);
      // No date of birth or country lifts a name more than this: one further below cannot match
      if (nameScore + MOST_EVIDENCE < threshold) continue;
      const entry = this.entries[name.entry] as IndexedEntry;
      const score = Math.min(1, Math.max(0, nameScore + evidence(party, entry.entry)));
      const kept = best.get(name.entry);
      if (score >= threshold && (!kept || score > kept.score)) {
        best.set(name.entry, { entry, matchedName: name.name, score, nameScore });
      }
    }
    return [...best.values()].sort((a, b) => b.score - a.score);
  }

  /** The entries listing this digital-currency address (exactly; hex addresses in any case) */
  screenAddress(address: string): IndexedEntry[] {
    return (this.addresses.get(addressKey(address)) ?? []).map((e) => this.entries[e] as IndexedEntry);
  }
}

/**
 * A token's keys: its first three letters, its skeleton, and the skeleton with each one of its letters
 * left out (one consonant changed, added or lost still shares a key)
 */
function keysOf(token: string): string[] {
  const s = skeleton(token);
  const deletions = s.length < 2 ? [] : [...s].map((_, i) => `~${s.slice(0, i)}${s.slice(i + 1)}`);
  return [`^${token.slice(0, 3)}`, `~${s}`, ...deletions];
}

/** Hex addresses (0x…) are the same in any case; base58 and bech32 ones are compared as written */
const addressKey = (address: string) => (/^0x[0-9a-f]+$/i.test(address) ? address.toLowerCase() : address);

/** How many tokens a hit's bits name */
function bits(mask: number): number {
  let n = 0;
  for (let m = mask; m !== 0; m &= m - 1) n++;
  return n;
}

function push<K>(map: Map<K, number[]>, key: K, value: number): void {
  const values = map.get(key);
  if (values) {
    if (values[values.length - 1] !== value) values.push(value);
  } else map.set(key, [value]);
}

/** A listed token less alike than this to a screened one does not make its names candidates */
const TOKEN_FLOOR = 0.75;

/** The most a date of birth and a country add to a name's likeness (evidence) */
const MOST_EVIDENCE = 0.07;

/**
 * What the date of birth and the country add to a name's likeness: a listed date or year that agrees is
 * for it, one that is years off against it (a list's dates are often approximate: a year either way is
 * not); a country among the entry's nationalities and addresses' countries a little for it, none of them
 * a little against. Neither says anything when either side lacks it.
 */
function evidence(party: ScreenedParty, entry: ListEntry): number {
  let moved = 0;
  if (party.dateOfBirth && entry.birthDates.length > 0) {
    const year = Number(party.dateOfBirth.slice(0, 4));
    if (entry.birthDates.includes(party.dateOfBirth)) moved += 0.05;
    else if (entry.birthDates.some((d) => Math.abs(Number(d.slice(0, 4)) - year) <= 1)) moved += 0.02;
    else moved -= 0.15;
  }
  const countries = [...entry.nationalities, ...entry.addresses.map((a) => a.country)];
  if (party.country && countries.length > 0) moved += countries.includes(party.country) ? 0.02 : -0.03;
  return moved;
}
