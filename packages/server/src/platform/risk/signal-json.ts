// A signal's row keeps its amount, currency, IP, email, card fingerprint and customer in columns (the
// velocity keys' indexes read them there); its JSON of attributes does not keep them a second time (issue
// 54: 136-148 bytes of a signal's write-ahead log, measured in docs/benchmarks.md). An attribute is
// left out only where the column gives back its JSON to the byte, and the JSON says which were left out
// (the bits of `"~"`), so every reader of recorded attributes (the backtests, in SQL) puts back exactly
// what was taken, and a row written before this, with no `"~"`, reads as it did. The amount in the
// reporting currency is left to the amount's column the same way when it is the amount itself (a signal
// in that currency: 30 bytes of its row). A top-level attribute that is its type's zero (an empty string,
// false, an int 0) is left out too: every reader of recorded attributes reads a missing top-level scalar as
// its type's zero (rule-sql.ts, recordedAttributeSql and recordedScalar), so it reads back the same (a
// payments charge's empty IP and IP country and its `authenticated: false`: some 50 bytes).
import { type RawBuilder, sql } from 'kysely';
import type { SignalKeyColumn } from './signal-index.ts';
import type { SignalKeys } from './velocity.ts';

/** The columns' values as the signal's row has them */
export interface SignalColumns {
  amount: bigint;
  currency: string;
  keys: SignalKeys;
}

/** An attribute a column holds: a top-level one, or a group's member */
interface InColumn {
  bit: number;
  name: string;
  member?: string;
  column: 'amount' | 'currency' | SignalKeyColumn;
  /** The column's value in the row being written */
  of: (row: SignalColumns) => unknown;
}

const IN_COLUMNS: readonly InColumn[] = [
  { bit: 1, name: 'amount', column: 'amount', of: (r) => r.amount },
  { bit: 2, name: 'currency', column: 'currency', of: (r) => r.currency },
  { bit: 4, name: 'ip', column: 'ip', of: (r) => r.keys.ip },
  { bit: 8, name: 'email', column: 'email', of: (r) => r.keys.email },
  {
    bit: 16,
    name: 'card',
    member: 'fingerprint',
    column: 'card_fingerprint',
    of: (r) => r.keys.cardFingerprint,
  },
  { bit: 32, name: 'customer', member: 'id', column: 'customer_id', of: (r) => r.keys.customerId },
  // Every signal's amount in the reporting currency: the amount itself when that is the signal's currency
  { bit: 64, name: 'amount_reporting', column: 'amount', of: (r) => r.amount },
];

/** The JSON key whose bits say which attributes were left to their columns */
const LEFT_OUT = '~';

/**
 * Whether the column gives the attribute back as it was: the same string, or the same int where the JSON
 * has it as a number (a safe integer: one past 2^53 is recorded as a string, and left in the JSON).
 */
function givesBack(value: unknown, column: unknown): boolean {
  if (typeof value === 'string') return value === column;
  return typeof value === 'bigint' && value === column && isSafeInteger(value);
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/** An int JSON holds as a number (attributesJson); past 2^53 it is written as a string */
export const isSafeInteger = (value: bigint) => value <= MAX_SAFE && value >= MIN_SAFE;

/** The attributes to record: those the columns hold left out, and the bits that say which */
export function recordedAttributes(
  attributes: Record<string, unknown>,
  row: SignalColumns,
): Record<string, unknown> {
  const recorded: Record<string, unknown> = { ...attributes };
  let bits = 0;
  for (const c of IN_COLUMNS) {
    const column = c.of(row);
    if (!c.member) {
      if (givesBack(recorded[c.name], column)) {
        delete recorded[c.name];
        bits |= c.bit;
      }
      continue;
    }
    const group = recorded[c.name];
    if (typeof group !== 'object' || group === null || Array.isArray(group)) continue;
    if (!givesBack((group as Record<string, unknown>)[c.member], column)) continue;
    const { [c.member]: _left, ...rest } = group as Record<string, unknown>;
    recorded[c.name] = rest;
    bits |= c.bit;
  }
  for (const [name, value] of Object.entries(recorded)) if (isZero(value)) delete recorded[name];
  if (bits !== 0) recorded[LEFT_OUT] = bits;
  return recorded;
}

/** A scalar CEL reads back from a missing top-level attribute (its type's zero) */
const isZero = (value: unknown) => value === '' || value === false || value === 0n;

const leftOut = (c: InColumn) =>
  sql`(coalesce((attributes->>${sql.lit(LEFT_OUT)})::int, 0) & ${sql.lit(c.bit)} <> 0)`;

/** The column's value as the JSON had it: an amount as a number, a string as a string */
const columnJson = (c: InColumn) => sql`to_jsonb(${sql.ref(c.column)})`;

const topLevel = (name: string) => IN_COLUMNS.find((c) => !c.member && c.name === name);
const memberOf = (name: string, member: string) =>
  IN_COLUMNS.find((c) => c.name === name && c.member === member);

/** A top-level attribute's text as recorded (`attributes->>name`) */
export function recordedTextSql(name: string): RawBuilder<unknown> {
  const c = topLevel(name);
  const text = sql`(attributes->>${name})`;
  return c ? sql`(CASE WHEN ${leftOut(c)} THEN ${sql.ref(c.column)}::text ELSE ${text} END)` : text;
}

/** A group's member's JSON as recorded (`attributes->name->member`) */
export function recordedMemberSql(name: string, member: string): RawBuilder<unknown> {
  const c = memberOf(name, member);
  const json = sql`(attributes->${name}->${member})`;
  return c ? sql`(CASE WHEN ${leftOut(c)} THEN ${columnJson(c)} ELSE ${json} END)` : json;
}

/** A whole group's JSON as recorded (`attributes->name`), its member put back */
export function recordedGroupSql(name: string): RawBuilder<unknown> {
  const json = sql`(attributes->${name})`;
  const members = IN_COLUMNS.filter((c) => c.name === name && c.member);
  return members.reduce(
    (group, c) =>
      sql`(CASE WHEN ${leftOut(c)} THEN ${group} || jsonb_build_object(${sql.lit(c.member)}, ${sql.ref(c.column)}) ELSE ${group} END)`,
    json,
  );
}
