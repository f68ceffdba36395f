// The simulator's magic values (the README's test cards; part of the contract: keep these, add more). Any
// future expiry and any CVV of the right length work; any other valid number is approved.
import type { DeclineReason } from './port.ts';

export type SimulatedOutcome =
  | { kind: 'approve' }
  | { kind: 'decline'; reason: DeclineReason }
  | { kind: 'soft_decline' }
  | { kind: 'challenge' }
  | { kind: 'frictionless' }
  | { kind: 'timeout' };

/** Why the network disputes a captured payment of a test card, a few sandbox days after its capture. */
export type DisputeKind = 'fraud' | 'not_received';
/** Sandbox days between a test card's capture and the network's chargeback */
export const DISPUTE_AFTER_DAYS = 3;

export const TEST_CARDS: Record<
  string,
  { outcome: SimulatedOutcome; description: string; dispute?: DisputeKind }
> = {
  '4111111111111111': { outcome: { kind: 'approve' }, description: 'Visa, approved' },
  '5555555555554444': { outcome: { kind: 'approve' }, description: 'Mastercard, approved' },
  '378282246310005': { outcome: { kind: 'approve' }, description: 'American Express, approved' },
  '4000000000000002': {
    outcome: { kind: 'decline', reason: 'generic' },
    description: 'declined (generic)',
  },
  '4000000000009995': {
    outcome: { kind: 'decline', reason: 'insufficient_funds' },
    description: 'declined, insufficient funds',
  },
  '4000000000000069': {
    outcome: { kind: 'decline', reason: 'expired_card' },
    description: 'declined, expired card',
  },
  '4000000000003238': {
    outcome: { kind: 'soft_decline' },
    description: 'soft decline: retry with transactionOption isSoftDecline=yes to go through 3D Secure',
  },
  '4000000000003220': {
    outcome: { kind: 'challenge' },
    description: '3D Secure challenge on the hosted ACS page',
  },
  '4000000000003063': { outcome: { kind: 'frictionless' }, description: '3D Secure frictionless, approved' },
  '4000000000000259': {
    outcome: { kind: 'approve' },
    dispute: 'fraud',
    description: 'Visa, approved; charged back as fraud (10.4) 3 days after capture; won with evidence',
  },
  '4000000000002685': {
    outcome: { kind: 'approve' },
    dispute: 'not_received',
    description:
      'Visa, approved; charged back as not received (13.1) 3 days after capture; lost whatever the evidence',
  },
  '5555550000000259': {
    outcome: { kind: 'approve' },
    dispute: 'fraud',
    description: 'Mastercard, approved; charged back as fraud (4837) 3 days after capture; won with evidence',
  },
  '5555550000002685': {
    outcome: { kind: 'approve' },
    dispute: 'not_received',
    description:
      'Mastercard, approved; charged back as not received (4855) 3 days after capture; lost whatever the evidence',
  },
  '4000000000000119': {
    outcome: { kind: 'timeout' },
    description: 'the acquirer times out: outcome unknown, approved by reconciliation a minute later',
  },
};

/** Legacy sandbox amounts (docs/wire-compatibility.md), honoured on any approving card. */
export const LEGACY_AMOUNTS: Record<string, DeclineReason> = {
  '0.02': 'insufficient_funds',
  '0.05': 'generic',
  '0.08': 'processor_timeout',
};

/** Outcomes the sandbox can script for a card's next authorizations. */
export const SCRIPTABLE_OUTCOMES = {
  approve: { kind: 'approve' },
  decline: { kind: 'decline', reason: 'generic' },
  insufficient_funds: { kind: 'decline', reason: 'insufficient_funds' },
  expired_card: { kind: 'decline', reason: 'expired_card' },
  soft_decline: { kind: 'soft_decline' },
  challenge: { kind: 'challenge' },
  frictionless: { kind: 'frictionless' },
  timeout: { kind: 'timeout' },
} as const satisfies Record<string, SimulatedOutcome>;
export type ScriptableOutcome = keyof typeof SCRIPTABLE_OUTCOMES;
