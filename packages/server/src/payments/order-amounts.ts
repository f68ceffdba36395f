// The bounds of an order's amount (the spec does not show them), shared by orders and payment links so
// a link can never ask for what an order refuses: from one minor unit to a billion in major units,
// exact as JSON numbers too.
import { validationFailed } from '../platform/errors/domain-error.ts';
import { parseAmountField } from '../platform/money/amount.ts';
import type { Asset } from '../platform/money/assets.ts';

export const MAX_AMOUNT_MAJOR = 1_000_000_000n;

export function boundedAmount(text: string, asset: Asset, field: string): bigint {
  const amount = parseAmountField(text, asset, field);
  if (amount > MAX_AMOUNT_MAJOR * 10n ** BigInt(asset.exponent)) {
    throw validationFailed(field, `${field} is at most ${MAX_AMOUNT_MAJOR} ${asset.code}`);
  }
  return amount;
}
