// What an action changed, before and after, for its audit record (docs/operations.md, Audit trail). The
// service that changes a setting a person may change (a role, a bank account, pricing, a payout schedule,
// an approval policy) notes the old and the new value in the unit of work it runs in; the audit hook
// adds them to the request's record. Outside a unit nothing is kept; within a tenant's API request the
// note is dropped with the unit (only people's requests are audited).
import { currentUnit } from '../db/connection-scope.ts';

export interface Change {
  /** What changed: 'role', 'bank account', 'fees'… */
  what: string;
  before: unknown;
  after: unknown;
}

const noted = new WeakMap<object, Change[]>();

export function noteChange(what: string, before: unknown, after: unknown): void {
  const unit = currentUnit();
  if (!unit) return;
  const changes = noted.get(unit) ?? [];
  changes.push({ what, before: plain(before), after: plain(after) });
  noted.set(unit, changes);
}

export const changesIn = (unit: object): Change[] => noted.get(unit) ?? [];

/** As JSON holds it: exact amounts (bigint) as text, dates as ISO text. */
const plain = (value: unknown): unknown =>
  value === undefined
    ? null
    : JSON.parse(JSON.stringify(value, (_key, v) => (typeof v === 'bigint' ? v.toString() : v)));
