// KYC status rules, pure. Transitions:
//   not_started → in_progress      the first step is stored or a document check started
//   in_progress → pending_review   every required step stored, identity and address documents verified
//   any other  → approved | rejected   the review decision (the vendor, or the sandbox decision route)
// Approved and rejected are final for the customer: steps can no longer change.
import type { KycStatus } from '../../platform/db/schema.ts';
import { type KycStep, STEP_NAMES } from './kyc-steps.ts';

export interface KycFacts {
  steps: Partial<Record<KycStep, unknown>>;
  identity: 'not_started' | 'started' | 'verified' | 'rejected';
  proofOfAddress: 'not_started' | 'started' | 'verified' | 'rejected';
}

/** The steps this customer still has to fill in (confirm-pep only for a politically exposed person). */
export function missingSteps(facts: KycFacts): string[] {
  const pep = facts.steps.pep as { isPoliticallyExposed?: boolean } | undefined;
  const required = STEP_NAMES.filter((step) => step !== 'confirm-pep' || pep?.isPoliticallyExposed === true);
  const missing: string[] = required.filter((step) => facts.steps[step] === undefined);
  if (facts.identity !== 'verified') missing.push('id-verification');
  if (facts.proofOfAddress !== 'verified') missing.push('poa-verification');
  return missing;
}

/** The status the facts imply while no review decision has been taken. */
export function derivedStatus(facts: KycFacts): KycStatus {
  const hasAnything =
    Object.keys(facts.steps).length > 0 ||
    facts.identity !== 'not_started' ||
    facts.proofOfAddress !== 'not_started';
  if (!hasAnything) return 'not_started';
  return missingSteps(facts).length === 0 ? 'pending_review' : 'in_progress';
}

export const isDecided = (status: KycStatus) => status === 'approved' || status === 'rejected';
