// Exact conversion between decimal text and integer minor units (docs/architecture.md, Money). No float ever
// holds money: a JSON number is re-read from its shortest decimal text, which is exact for what a
// client can have typed.
import { DomainError } from '../errors/domain-error.ts';
import { type Asset, findAsset, type Network } from './assets.ts';

/** Integer part digits beyond which an amount is absurd for any asset (10^15 units of anything). */
export const MAX_INTEGER_DIGITS = 15;

export type AmountProblem = 'not_a_decimal' | 'negative' | 'too_many_decimals' | 'too_large' | 'zero';

export class AmountError extends Error {
  constructor(
    readonly problem: AmountProblem,
    message: string,
  ) {
    super(message);
  }
}

const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

export interface ParseAmountOptions {
  /** Accept 0 (default: false: a payment of nothing is always a mistake) */
  allowZero?: boolean;
}

/** Parses "10.90" (or the JSON number 10.9) into minor units of the asset: 1090n for EUR. */
export function parseAmount(input: string | number, asset: Asset, options: ParseAmountOptions = {}): bigint {
  const text = typeof input === 'number' ? numberToText(input) : input.trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new AmountError('not_a_decimal', `"${truncate(text)}" is not a decimal amount`);
  const [, sign, integerDigits = '', fractionDigits = ''] = match;
  const significantFraction = fractionDigits.replace(/0+$/, '');
  if (significantFraction.length > asset.exponent) {
    throw new AmountError(
      'too_many_decimals',
      asset.exponent === 0
        ? `${asset.code} amounts have no decimals`
        : `${asset.code} amounts have at most ${asset.exponent} decimals`,
    );
  }
  const integerPart = integerDigits.replace(/^0+(?=\d)/, '');
  if (integerPart.length > MAX_INTEGER_DIGITS) {
    throw new AmountError('too_large', `amounts above ${MAX_INTEGER_DIGITS} integer digits are refused`);
  }
  const minor = BigInt(integerPart + significantFraction.padEnd(asset.exponent, '0'));
  if (sign === '-' && minor !== 0n) throw new AmountError('negative', 'amounts cannot be negative');
  if (minor === 0n && !options.allowZero)
    throw new AmountError('zero', 'the amount must be greater than zero');
  return minor;
}

/**
 * Renders minor units as decimal text. Fiat keeps exactly the currency's exponent digits (1090n EUR →
 * "10.90"), as prices are written; crypto shows its own precision with trailing zeros trimmed
 * (0.005 ETH → "0.005", not eighteen decimals). Both read back exactly with parseAmount.
 */
export function formatAmount(minor: bigint, asset: Asset): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(asset.exponent + 1, '0');
  const cut = digits.length - asset.exponent;
  const fraction = asset.kind === 'crypto' ? digits.slice(cut).replace(/0+$/, '') : digits.slice(cut);
  const text = fraction === '' ? digits.slice(0, cut) : `${digits.slice(0, cut)}.${fraction}`;
  return negative ? `-${text}` : text;
}

/** Converts ledger minor units into the network's on-chain base units (USDT on BSC has 18 decimals). */
export function toOnChainUnits(minor: bigint, asset: Asset, network: Network): bigint {
  const shift = network.onChainDecimals - asset.exponent;
  return shift >= 0 ? minor * 10n ** BigInt(shift) : minor / 10n ** BigInt(-shift);
}

function numberToText(value: number): string {
  if (!Number.isFinite(value)) throw new AmountError('not_a_decimal', 'the amount is not a finite number');
  // Shortest round-trip text; exponent notation (1e21, 1e-7) is refused by the pattern, never guessed.
  return String(value);
}

function truncate(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** parseAmount for a request field: a bad amount is a 400 naming the field. */
export function parseAmountField(input: string | number, asset: Asset, field = 'amount'): bigint {
  try {
    return parseAmount(input, asset);
  } catch (err) {
    if (err instanceof AmountError) throw new DomainError('validation_failed', err.message, { field });
    throw err;
  }
}

/** formatAmount by currency code, for amounts already stored in a known asset. */
export function formatAmountIn(minor: bigint, code: string): string {
  const asset = findAsset(code);
  if (!asset) throw new Error(`unknown asset ${code}`);
  return formatAmount(minor, asset);
}
