// The bounds of an order's amount (the spec does not show them), shared by orders and payment links so
// a link can never ask for what an order refuses: from one minor unit to a billion in major units,
// exact as JSON numbers too.
import { validationFailed } from '../platform/errors/domain-error.ts';
import type { ClientAmount } from '../platform/money/amount.ts';
import type { Asset } from '../platform/money/assets.ts';

export const MAX_AMOUNT_MAJOR = 1_000_000_000n;

/** The client's amount in minor units of the asset, within the bounds (a 400 naming its field). */
export function boundedAmount(given: ClientAmount, asset: Asset): bigint {
  const { field } = given;
  const amount = given.in(asset);
  if (amount > MAX_AMOUNT_MAJOR * 10n ** BigInt(asset.exponent)) {
    throw validationFailed(field, `${field} is at most ${MAX_AMOUNT_MAJOR} ${asset.code}`);
  }
  return amount;
}
