// Prefixed, sortable identifiers (a closed prefix map), except where a spec fixes another format.
import { pooledRandomBytes } from './crypto/pooled-random.ts';

const PREFIXES = {
  partner: 'ptn',
  store: 'str',
  event: 'evt',
  delivery: 'whd',
  ledgerAccount: 'lac',
  ledgerTransaction: 'ltx',
  request: 'req',
  customer: 'cust',
  refreshToken: 'rtk',
  challenge: 'chl',
  message: 'msg',
  kycVerification: 'kyv',
  topup: 'top',
  cryptoApiKey: 'cak',
  quote: 'qte',
  process: 'proc',
  kycSession: 'kvs',
  consoleUser: 'usr',
  balanceTransaction: 'btx',
  payout: 'po',
  bankFile: 'bkf',
  approval: 'apr',
  riskRule: 'rr',
  riskList: 'rl',
  riskReview: 'rv',
  bankAccountChange: 'bac',
} as const;

export type IdKind = keyof typeof PREFIXES;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** The last time and random part a sequence of ULIDs used: each id kind has its own */
interface UlidSequence {
  lastTimeMs: number;
  lastRandom: number[];
}

const newSequence = (): UlidSequence => ({ lastTimeMs: -1, lastRandom: [] });
const sequences = new Map<string, UlidSequence>();
/** The sequence of ULIDs made without a kind */
const sharedSequence = newSequence();

/**
 * A monotonic ULID: 48-bit millisecond time + 80 random bits, Crockford base32. Within one millisecond
 * (or a clock that stands still, as a frozen sandbox clock does) the random part is incremented, so ids
 * of one sequence made by one process sort in creation order. Each id kind is a sequence of its own, so
 * an id takes a later time than asked for only after an id of its own kind did: ids made by the real
 * clock (a request's) never carry an event's, made by the sandbox clock, past its time.
 */
export function ulid(timeMs: number = Date.now(), sequence: UlidSequence = sharedSequence): string {
  const s = sequence;
  if (timeMs <= s.lastTimeMs) {
    timeMs = s.lastTimeMs;
    let i = s.lastRandom.length - 1;
    while (i >= 0 && s.lastRandom[i] === 31) s.lastRandom[i--] = 0;
    if (i < 0) throw new Error('ULID random part exhausted within one millisecond');
    s.lastRandom[i] = (s.lastRandom[i] ?? 0) + 1;
  } else {
    s.lastTimeMs = timeMs;
    s.lastRandom = [...pooledRandomBytes(16)].map((byte) => byte % 32);
    // Leave headroom so increments within a millisecond do not overflow.
    s.lastRandom[0] = (s.lastRandom[0] ?? 0) % 16;
  }
  let time = '';
  let t = timeMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD.charAt(t % 32) + time;
    t = Math.floor(t / 32);
  }
  return time + s.lastRandom.map((d) => CROCKFORD.charAt(d)).join('');
}

/**
 * A version 7 UUID (RFC 9562): the 48-bit millisecond time first, then 74 random bits, for the rows whose
 * ids are UUIDs by the spec (card transactions, crypto orders) or by the card network's reference. A
 * random (version 4) UUID put each new row's index entry anywhere in its index, splitting a page wherever
 * it landed and, on a large table, dirtying a page of its own after every checkpoint (one full-page image
 * each); ids that start with the time go to the index's right edge, as sequence numbers do.
 */
export function uuidv7(timeMs: number = Date.now()): string {
  // The pool's bytes, this call's alone (the pool moves past them): written over in place
  const bytes = pooledRandomBytes(16);
  bytes.writeUIntBE(Math.max(0, Math.floor(timeMs)), 0, 6);
  bytes[6] = 0x70 | ((bytes[6] as number) & 0x0f);
  bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** How every id of this kind starts ('po_' for a payout): what tells our references from others'. */
export const idPrefix = (kind: IdKind): string => `${PREFIXES[kind]}_`;

export function newId(kind: IdKind, timeMs?: number): string {
  let sequence = sequences.get(kind);
  if (!sequence) {
    sequence = newSequence();
    sequences.set(kind, sequence);
  }
  return `${PREFIXES[kind]}_${ulid(timeMs, sequence)}`;
}

/**
 * The smallest id of a kind made at or after a time: ids carry the time they were made with (or a later
 * one, never an earlier one), so `id >= idFloor(kind, t)` holds for every row made at or after `t` and
 * lets an `(owner, id)` index serve a time window's lower end.
 */
export function idFloor(kind: IdKind, timeMs: number): string {
  let time = '';
  let t = Math.max(0, Math.floor(timeMs));
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD.charAt(t % 32) + time;
    t = Math.floor(t / 32);
  }
  return `${PREFIXES[kind]}_${time}`;
}

/** The time a prefixed ULID id was made with, in ms since the epoch (the inverse of idFloor's prefix) */
export function idTime(id: string): number {
  const time = id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11);
  let t = 0;
  for (const c of time) t = t * 32 + CROCKFORD.indexOf(c);
  return t;
}

/** Whether an id has the UUID shape (spec ids like cardId are UUID-shaped; anything else is simply unknown). */
export function isUuid(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id);
}
