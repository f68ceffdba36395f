// What each audited write is called in the audit trail, and which object it acted on (docs/operations.md,
// Audit trail): one table for the admin API, the console, `tessera admin` and the records the services
// write themselves. An action's name is stable (`api_key.revoked`), whatever route or command did it, so
// a search by action finds every way it was done; its object is the key, the refund, the payout, the
// person — found where the table says: a path parameter, the answer's id, the page the console sends the
// person to next (a made object's page), or what the handler noted. A write route with no row here stops
// the start (audit-hooks.ts).
import type { FastifyRequest } from 'fastify';

/** Where a write's object is found. */
export type AuditObject =
  /** A path parameter */
  | { param: string }
  /** A member of the JSON answer (what the write made) */
  | { answer: string }
  /** The last segment of the redirect's path: the console sends the person to what it made */
  | { location: true; param?: string }
  /** What the handler noted (noteAuditObject), else a path parameter */
  | { noted: true; param?: string }
  /** A field of the request's body (a tenant named by the form) */
  | { field: string }
  /** Nothing in particular: a sign-out, a payout run over every tenant */
  | { none: true };

export interface AuditAction {
  action: string;
  object: AuditObject;
}

const param = (name: string): AuditObject => ({ param: name });
const answer = (path: string): AuditObject => ({ answer: path });
const none: AuditObject = { none: true };

export const AUDIT_ACTIONS: Readonly<Record<string, AuditAction>> = {
  // The admin API
  'POST /admin/partners': { action: 'partner.created', object: answer('id') },
  'PATCH /admin/partners/:id': { action: 'partner.updated', object: param('id') },
  'POST /admin/merchants': { action: 'merchant.created', object: answer('id') },
  'PATCH /admin/merchants/:id/sites/:siteId': { action: 'site.updated', object: param('siteId') },
  'POST /admin/merchants/:id/api-keys': { action: 'api_key.created', object: answer('apiKeyId') },
  'POST /admin/merchants/:id/api-keys/:apiKeyId/revoke': {
    action: 'api_key.revoked',
    object: param('apiKeyId'),
  },
  'POST /admin/merchants/:id/sites/:siteId/secret-key/rotate': {
    action: 'site_secret_key.rotated',
    object: param('siteId'),
  },
  'PUT /admin/merchants/:id/approval-thresholds': { action: 'approval_thresholds.set', object: param('id') },
  'PUT /admin/merchants/:id/business-profile': { action: 'business_profile.set', object: param('id') },
  'POST /admin/merchants/:id/business-profile/submit': {
    action: 'business_profile.submitted',
    object: param('id'),
  },
  'POST /admin/merchants/:id/business-profile/decision': {
    action: 'business_profile.decided',
    object: param('id'),
  },
  'POST /admin/merchants/:id/business-profile/documents': {
    action: 'business_profile.documents_added',
    object: param('id'),
  },
  'POST /admin/merchants/:id/onboarding-invitations': {
    action: 'onboarding_invitation.created',
    object: answer('id'),
  },
  'PUT /admin/merchants/:id/sites/:siteId/bank-account': {
    action: 'bank_account.set',
    object: param('siteId'),
  },
  'PUT /admin/merchants/:id/sites/:siteId/payout-schedule': {
    action: 'payout_schedule.set',
    object: param('siteId'),
  },
  'PUT /admin/merchants/:id/sites/:siteId/pricing': { action: 'pricing.set', object: param('siteId') },
  'POST /admin/merchants/:id/sites/:siteId/payouts': { action: 'payout.created', object: answer('id') },
  'POST /admin/stores': { action: 'store.created', object: answer('id') },
  'PATCH /admin/stores/:id': { action: 'store.updated', object: param('id') },
  'PUT /admin/stores/:id/approval-thresholds': { action: 'approval_thresholds.set', object: param('id') },
  'PUT /admin/stores/:id/business-profile': { action: 'business_profile.set', object: param('id') },
  'POST /admin/stores/:id/business-profile/submit': {
    action: 'business_profile.submitted',
    object: param('id'),
  },
  'POST /admin/stores/:id/business-profile/decision': {
    action: 'business_profile.decided',
    object: param('id'),
  },
  'POST /admin/stores/:id/business-profile/documents': {
    action: 'business_profile.documents_added',
    object: param('id'),
  },
  'POST /admin/stores/:id/onboarding-invitations': {
    action: 'onboarding_invitation.created',
    object: answer('id'),
  },
  'PUT /admin/stores/:id/bank-account': { action: 'bank_account.set', object: param('id') },
  'PUT /admin/stores/:id/payout-schedule': { action: 'payout_schedule.set', object: param('id') },
  'PUT /admin/stores/:id/pricing': { action: 'pricing.set', object: param('id') },
  'POST /admin/stores/:id/payouts': { action: 'payout.created', object: answer('id') },
  'POST /admin/payout-runs': { action: 'payout_run.run', object: none },
  'POST /admin/risk/rules': { action: 'risk_rule.created', object: answer('id') },
  'POST /admin/risk/rules/backtest': { action: 'risk_rule.backtested', object: none },
  'PATCH /admin/risk/rules/:id': { action: 'risk_rule.updated', object: param('id') },
  'DELETE /admin/risk/rules/:id': { action: 'risk_rule.deleted', object: param('id') },
  'POST /admin/risk/reviews/:id/approve': { action: 'risk_review.approved', object: param('id') },
  'POST /admin/risk/reviews/:id/refuse': { action: 'risk_review.refused', object: param('id') },
  'POST /admin/compliance/sanctions/imports': { action: 'sanctions_list.imported', object: answer('id') },
  'POST /admin/compliance/screen': { action: 'compliance.screened', object: none },
  'POST /admin/compliance/cases/:id/notes': { action: 'compliance_case.noted', object: param('id') },
  'POST /admin/compliance/cases/:id/assign': { action: 'compliance_case.assigned', object: param('id') },
  'POST /admin/compliance/cases/:id/decision': { action: 'compliance_case.decided', object: param('id') },
  'POST /admin/risk/lists': { action: 'risk_list.created', object: answer('id') },
  'DELETE /admin/risk/lists/:id': { action: 'risk_list.deleted', object: param('id') },
  'POST /admin/risk/lists/:id/items': { action: 'risk_list.items_added', object: param('id') },
  'DELETE /admin/risk/lists/:id/items': { action: 'risk_list.item_removed', object: param('id') },
  'POST /admin/events/:id/redeliver': { action: 'event.redelivered', object: param('id') },
  'POST /admin/events/replay': { action: 'events.replayed', object: none },
  'POST /admin/issuing/cards/:cardId/suspend': { action: 'card.suspended', object: param('cardId') },
  'POST /admin/issuing/cards/:cardId/reinstate': { action: 'card.reinstated', object: param('cardId') },
  'POST /admin/console-users': { action: 'console_user.created', object: answer('id') },
  'PUT /admin/console-users/:id/role': { action: 'console_user.role_changed', object: param('id') },
  'DELETE /admin/console-users/:id': { action: 'console_user.removed', object: param('id') },
  // The console
  'POST /console/sign-in': { action: 'session.signed_in', object: none },
  'POST /console/sign-in/second-factor': { action: 'session.second_factor_checked', object: none },
  'POST /console/sign-out': { action: 'session.signed_out', object: none },
  'POST /console/account/sign-out-everywhere': { action: 'session.signed_out_everywhere', object: none },
  'POST /console/account/totp': { action: 'totp.enabled', object: none },
  'POST /console/account/totp/disable': { action: 'totp.disabled', object: none },
  'POST /console/members/new': { action: 'console_user.created', object: { noted: true } },
  'POST /console/members/:id/role': { action: 'console_user.role_changed', object: param('id') },
  'POST /console/members/:id/remove': { action: 'console_user.removed', object: param('id') },
  // The person's decision as sent (refused ones too); what it did is the service's approval.approved/rejected.
  'POST /console/compliance/cases/:id/notes': { action: 'compliance_case.noted', object: param('id') },
  'POST /console/compliance/cases/:id/assign': { action: 'compliance_case.assigned', object: param('id') },
  'POST /console/compliance/cases/:id/clear': { action: 'compliance_case.decided', object: param('id') },
  'POST /console/compliance/cases/:id/confirm': { action: 'compliance_case.decided', object: param('id') },
  'POST /console/compliance/onboarding/:tenant/decide': {
    action: 'business_profile.decided',
    object: param('tenant'),
  },
  'POST /console/compliance/onboarding/invite': { action: 'onboarding_invitation.created', object: none },
  'POST /console/approvals/:id/approve': { action: 'approval.decided', object: param('id') },
  'POST /console/approvals/:id/reject': { action: 'approval.decided', object: param('id') },
  'POST /console/developers/keys/merchants/:merchantId/new': {
    action: 'api_key.created',
    object: { noted: true },
  },
  'POST /console/developers/keys/merchants/:merchantId/:keyId/revoke': {
    action: 'api_key.revoked',
    object: param('keyId'),
  },
  'POST /console/developers/events/:id/redeliver': { action: 'event.redelivered', object: param('id') },
  'POST /console/crypto/stores/:id/keys/new': { action: 'api_key.created', object: { noted: true } },
  'POST /console/crypto/stores/:id/keys/:keyId/revoke': { action: 'api_key.revoked', object: param('keyId') },
  'POST /console/crypto/stores/:id/evm-wallet': { action: 'evm_wallet.set', object: param('id') },
  'POST /console/issuing/cards/:id/freeze': { action: 'card.frozen', object: param('id') },
  'POST /console/issuing/cards/:id/unfreeze': { action: 'card.unfrozen', object: param('id') },
  'POST /console/money/bank-accounts/:tenant': { action: 'bank_account.set', object: param('tenant') },
  // Made now, or asked of a second person (the approval request is then the object).
  'POST /console/money/payouts/new': { action: 'payout.created', object: { location: true } },
  'POST /console/money/reports/reconcile': { action: 'reconcile.run', object: none },
  'POST /console/payments/transactions/:id/refund': {
    action: 'refund.created',
    object: { location: true, param: 'id' },
  },
  'POST /console/payments/transactions/:id/capture': { action: 'transaction.captured', object: param('id') },
  'POST /console/payments/transactions/:id/void': { action: 'transaction.voided', object: param('id') },
  'POST /console/payments/disputes/:id/accept': { action: 'dispute.accepted', object: param('id') },
  'POST /console/payments/disputes/:id/evidence': {
    action: 'dispute.evidence_submitted',
    object: param('id'),
  },
  'POST /console/payments/sites/:id/ipn-url': { action: 'site.ipn_url_set', object: param('id') },
  'POST /console/payments/sites/:id/rotate-key': { action: 'site_secret_key.rotated', object: param('id') },
  'POST /console/risk/rules/new': { action: 'risk_rule.created', object: { location: true } },
  'POST /console/risk/rules/:id/edit': { action: 'risk_rule.updated', object: param('id') },
  'POST /console/risk/rules/:id/delete': { action: 'risk_rule.deleted', object: param('id') },
  'POST /console/risk/backtest': { action: 'risk_rule.backtested', object: none },
  'POST /console/risk/lists/new': { action: 'risk_list.created', object: { location: true } },
  'POST /console/risk/lists/:id/items': { action: 'risk_list.items_added', object: param('id') },
  'POST /console/risk/lists/:id/remove': { action: 'risk_list.item_removed', object: param('id') },
  'POST /console/risk/lists/:id/delete': { action: 'risk_list.deleted', object: param('id') },
  'POST /console/risk/reviews/:id/approve': { action: 'risk_review.approved', object: param('id') },
  'POST /console/risk/reviews/:id/refuse': { action: 'risk_review.refused', object: param('id') },
  'POST /console/sandbox/clock': { action: 'sandbox_clock.advanced', object: none },
  'POST /console/sandbox/trigger': { action: 'sandbox.triggered', object: { field: 'event' } },
  'POST /console/sandbox/payouts/:id/bank': { action: 'sandbox.bank_outcome', object: param('id') },
  // `tessera admin` (its object: the id it made, or the tenant it set)
  'tessera admin create-partner': { action: 'partner.created', object: answer('id') },
  'tessera admin create-merchant': { action: 'merchant.created', object: answer('id') },
  'tessera admin create-store': { action: 'store.created', object: answer('id') },
  'tessera admin rotate-site-key': { action: 'site_secret_key.rotated', object: { field: 'siteId' } },
  'tessera admin set-pricing': { action: 'pricing.set', object: { field: 'tenant' } },
  'tessera admin set-payout-schedule': { action: 'payout_schedule.set', object: { field: 'tenant' } },
  'tessera admin create-console-user': { action: 'console_user.created', object: answer('id') },
  // What the services record themselves
  'card secrets revealed': { action: 'card_secrets.revealed', object: param('cardId') },
  'approval requested': { action: 'approval.requested', object: param('id') },
  'approval approved': { action: 'approval.approved', object: param('id') },
  'approval rejected': { action: 'approval.rejected', object: param('id') },
  'approval expired': { action: 'approval.expired', object: param('id') },
  'onboarding page finished': { action: 'business_profile.submitted', object: param('tenant') },
};

/** The stable name of a route's, command's or service's action (throws on one the table lacks). */
export function auditActionName(key: string): string {
  const row = AUDIT_ACTIONS[key];
  if (!row) throw new Error(`no audit action for ${key} (platform/audit/audit-actions.ts)`);
  return row.action;
}

const NOTED = Symbol('audit object');

/** A handler names the object it made (a new key, a new person) for its audit record. */
export function noteAuditObject(request: FastifyRequest, id: string | number): void {
  (request as unknown as Record<symbol, string>)[NOTED] = String(id);
}

/** The object of a route's write, from where its row says. */
export function auditObjectOf(
  object: AuditObject,
  request: FastifyRequest,
  answer: { payload: unknown; location: string | undefined },
): string | undefined {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const fromParam = (name: string | undefined) =>
    name !== undefined && params[name] !== undefined ? String(params[name]) : undefined;
  if ('param' in object && !('location' in object) && !('noted' in object)) return fromParam(object.param);
  if ('answer' in object) return answerMember(answer.payload, object.answer);
  if ('location' in object) {
    const path = answer.location?.split('?')[0] ?? '';
    const last = path.split('/').filter(Boolean).pop();
    return last && path.startsWith('/console/') && /\d|_/.test(last) ? last : fromParam(object.param);
  }
  if ('noted' in object) {
    return (request as unknown as Record<symbol, string | undefined>)[NOTED] ?? fromParam(object.param);
  }
  if ('field' in object) {
    const value = ((request.body ?? {}) as Record<string, unknown>)[object.field];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  }
  return undefined;
}

/** `id`, or a dotted path, of a JSON answer (a string payload, as onSend sees it). */
function answerMember(payload: unknown, path: string): string | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return undefined;
  try {
    let node: unknown = JSON.parse(payload);
    for (const key of path.split('.')) node = (node as Record<string, unknown> | null)?.[key];
    return typeof node === 'string' || typeof node === 'number' ? String(node) : undefined;
  } catch {
    return undefined;
  }
}
