// How the simulated card network decides, as pure functions: the outcome of an authorization, the answer
// an approval gives, and what a sale captures with it.
import { isExpired } from '../../platform/cards/card-number.ts';
import { formatAmountIn } from '../../platform/money/amount.ts';
import type { AuthorizationAnswer, AuthorizationRequest } from './port.ts';
import {
  LEGACY_AMOUNTS,
  SCRIPTABLE_OUTCOMES,
  type ScriptableOutcome,
  type SimulatedOutcome,
  TEST_CARDS,
} from './test-cards.ts';

/**
 * What the simulated network decides for an authorization: the scripted outcome, else the test card's,
 * else approval; then the rules every card keeps (expiry, the legacy amounts, no challenge for credits and
 * merchant-initiated charges, a soft decline's retry challenged, a challenge the requestor mandates made).
 */
export function decideOutcome(
  r: Omit<AuthorizationRequest, 'returnUrl'>,
  now: Date,
  scripted: ScriptableOutcome | undefined,
): SimulatedOutcome {
  let outcome: SimulatedOutcome = scripted
    ? SCRIPTABLE_OUTCOMES[scripted]
    : (TEST_CARDS[r.card.pan]?.outcome ?? { kind: 'approve' });
  if (isExpired(r.card, now)) return { kind: 'decline', reason: 'expired_card' };
  if (outcome.kind === 'approve' || outcome.kind === 'frictionless') {
    const legacy = LEGACY_AMOUNTS[formatAmountIn(r.amount, r.currency)];
    if (legacy) return { kind: 'decline', reason: legacy };
  }
  // Pushing funds to a card and merchant-initiated charges are never challenged.
  const exempt = r.kind === 'credit' || r.initiator === 'merchant';
  if (outcome.kind === 'soft_decline') {
    if (exempt) return { kind: 'decline', reason: 'soft_decline' };
    outcome =
      r.isSoftDeclineRetry || r.isAuthenticated
        ? { kind: 'challenge' }
        : { kind: 'decline', reason: 'soft_decline' };
  }
  // A challenge the requestor mandates is made where the card would be approved without one.
  if (r.challengeRequested && (outcome.kind === 'approve' || outcome.kind === 'frictionless')) {
    outcome = { kind: 'challenge' };
  }
  if (outcome.kind === 'challenge' && (exempt || r.isAuthenticated)) return { kind: 'approve' };
  if (outcome.kind === 'frictionless' && exempt) return { kind: 'approve' };
  return outcome;
}

export const isSale = (r: Omit<AuthorizationRequest, 'returnUrl'>) => r.kind === 'purchase' && r.capture;

// a credit (OCT) moves the funds at once; a sale is captured with its approval
export const capturedWith = (
  r: Omit<AuthorizationRequest, 'returnUrl'>,
  status: 'approved' | 'declined' | 'challenge',
) => (status === 'approved' && (r.kind === 'credit' || isSale(r)) ? r.amount : 0n);

export function approval(
  r: Omit<AuthorizationRequest, 'returnUrl'>,
  outcome: SimulatedOutcome,
): Extract<AuthorizationAnswer, { outcome: 'approved' }> {
  const frictionless = outcome.kind === 'frictionless' || (r.kind === 'purchase' && r.isAuthenticated);
  return { outcome: 'approved', threeDS: frictionless ? 'frictionless' : 'none', captured: isSale(r) };
}
