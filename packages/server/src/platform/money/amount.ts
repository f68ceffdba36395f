// Exact conversion between decimal text and integer minor units (docs/architecture.md, Money). No float ever
// holds money: a JSON number is re-read from its shortest decimal text, which is exact for what a
// client can have typed.
import { DomainError } from '../errors/domain-error.ts';
import { type Asset, knownAsset, type Network } from './assets.ts';

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

/** A decimal as written: its sign, its integer digits and its fraction without trailing zeros. */
interface DecimalParts {
  negative: boolean;
  integerDigits: string;
  significantFraction: string;
}

/** Reads decimal text (or a JSON number) exactly; refuses anything that is not a plain decimal. */
function readDecimal(input: string | number): DecimalParts {
  const text = typeof input === 'number' ? numberToText(input) : input.trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new AmountError('not_a_decimal', `"${truncate(text)}" is not a decimal amount`);
  const [, sign, integerDigits = '', fractionDigits = ''] = match;
  return { negative: sign === '-', integerDigits, significantFraction: fractionDigits.replace(/0+$/, '') };
}

/** The decimal in minor units of the asset, refusing what the asset cannot hold. */
function minorUnits(parts: DecimalParts, asset: Asset, options: ParseAmountOptions): bigint {
  const { significantFraction } = parts;
  if (significantFraction.length > asset.exponent) {
    throw new AmountError(
      'too_many_decimals',
      asset.exponent === 0
        ? `${asset.code} amounts have no decimals`
        : `${asset.code} amounts have at most ${asset.exponent} decimals`,
    );
  }
  const integerPart = parts.integerDigits.replace(/^0+(?=\d)/, '');
  if (integerPart.length > MAX_INTEGER_DIGITS) {
    throw new AmountError('too_large', `amounts above ${MAX_INTEGER_DIGITS} integer digits are refused`);
  }
  const minor = BigInt(integerPart + significantFraction.padEnd(asset.exponent, '0'));
  if (parts.negative && minor !== 0n) throw new AmountError('negative', 'amounts cannot be negative');
  if (minor === 0n && !options.allowZero)
    throw new AmountError('zero', 'the amount must be greater than zero');
  return minor;
}

/** Parses "10.90" (or the JSON number 10.9) into minor units of the asset: 1090n for EUR. */
export function parseAmount(input: string | number, asset: Asset, options: ParseAmountOptions = {}): bigint {
  return minorUnits(readDecimal(input), asset, options);
}

/**
 * An amount a client wrote, read at the edge before its asset is known: a capture, a refund or a
 * clearing is in the currency of the record it names, which only the service reads. It holds exact
 * digits (never text to parse again, never a float) and the field it came in, so `in(asset)` names that
 * field when the asset cannot hold it.
 */
export class ClientAmount {
  private constructor(
    readonly field: string,
    private readonly parts: DecimalParts,
  ) {}

  /** The field's value as an exact decimal; a 400 naming the field when it is not one. */
  static read(input: string | number, field = 'amount'): ClientAmount {
    return asFieldError(field, () => new ClientAmount(field, readDecimal(input)));
  }

  /** An amount already held in minor units of an asset (a stored link's), to be taken as if a client wrote it. */
  static fromMinor(minor: bigint, asset: Asset, field = 'amount'): ClientAmount {
    return new ClientAmount(field, readDecimal(formatAmount(minor, asset)));
  }

  /** Minor units of the asset; a 400 naming the field for too many decimals, a negative or a zero. */
  in(asset: Asset): bigint {
    return asFieldError(this.field, () => minorUnits(this.parts, asset, {}));
  }
}

/** A request body with its `amount` read: the edge's one step for a body whose asset the service knows. */
export function withClientAmount<T extends { amount: string | number }>(
  body: T,
): Omit<T, 'amount'> & { amount: ClientAmount } {
  return { ...body, amount: ClientAmount.read(body.amount) };
}

/** An optional amount field, read when given. */
export function optionalAmount(
  input: string | number | undefined,
  field = 'amount',
): ClientAmount | undefined {
  return input === undefined ? undefined : ClientAmount.read(input, field);
}

function asFieldError<T>(field: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof AmountError) throw new DomainError('validation_failed', err.message, { field });
    throw err;
  }
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

/** parseAmount for a request field whose asset the edge knows: a bad amount is a 400 naming the field. */
export function parseAmountField(input: string | number, asset: Asset, field = 'amount'): bigint {
  return ClientAmount.read(input, field).in(asset);
}

/** formatAmount by currency code, for amounts already stored in a known asset. */
export function formatAmountIn(minor: bigint, code: string): string {
  return formatAmount(minor, knownAsset(code));
}
