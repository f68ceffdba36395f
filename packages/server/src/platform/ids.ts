// Prefixed, sortable identifiers (a closed prefix map), except where a spec fixes another format.
import { randomBytes } from 'node:crypto';

const PREFIXES = {
  partner: 'ptn',
  store: 'str',
  event: 'evt',
  delivery: 'whd',
  ledgerAccount: 'lac',
  ledgerTransaction: 'ltx',
  request: 'req',
} as const;

export type IdKind = keyof typeof PREFIXES;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID: 48-bit millisecond time + 80 random bits, Crockford base32, lexicographically sortable. */
export function ulid(timeMs: number = Date.now()): string {
  let time = '';
  let t = timeMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD.charAt(t % 32) + time;
    t = Math.floor(t / 32);
  }
  const random = randomBytes(16);
  let rest = '';
  for (let i = 0; i < 16; i++) rest += CROCKFORD.charAt((random[i] ?? 0) % 32);
  return time + rest;
}

export function newId(kind: IdKind, timeMs?: number): string {
  return `${PREFIXES[kind]}_${ulid(timeMs)}`;
}
