// System codes of failed payments in the 402 body (spec, Errors: `error[].code`). 839 is the service's
// soft decline (docs/wire-compatibility.md: the client retries with transactionOption={"isSoftDecline":"yes"}); the
// others are Tessera's, one per decline reason, listed in docs/payments.md.
import type { DeclineReason } from '../../rails/card-network/port.ts';

export type FailureReason = DeclineReason | 'merchant_balance_insufficient' | 'card_deleted' | 'risk_blocked';

export const FAILURES: Record<FailureReason, { code: number; message: string }> = {
  generic: { code: 810, message: 'The card was declined by the issuer' },
  insufficient_funds: { code: 811, message: 'Insufficient funds' },
  expired_card: { code: 812, message: 'The card has expired' },
  authentication_failed: { code: 813, message: '3D Secure authentication failed' },
  processor_timeout: { code: 814, message: 'The processor did not answer in time' },
  card_not_active: { code: 815, message: 'The card is not active' },
  invalid_card: { code: 816, message: 'The card details do not match a card' },
  currency_not_supported: { code: 817, message: 'The card does not support this currency' },
  amount_over_limit: { code: 818, message: 'The amount is over the card’s limit' },
  merchant_balance_insufficient: { code: 820, message: 'The site’s balance does not cover this credit' },
  card_deleted: { code: 821, message: 'The stored card was deleted' },
  // Refused by one of the merchant's or the platform's risk rules (docs/risk.md): the payer is not told which.
  risk_blocked: { code: 822, message: 'The payment was declined' },
  soft_decline: {
    code: 839,
    message: 'Soft decline: retry with 3D Secure (transactionOption isSoftDecline=yes)',
  },
};
