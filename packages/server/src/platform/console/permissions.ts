// What each console page and action needs, and which roles have it (docs/console.md, Roles). Every console
// route is listed here: registering one that is not stops the server at start, so no page is left open by
// omission. A GET that shows an action's confirmation needs what the action needs; a list's CSV export
// (`<list>.csv`, list-export.ts) what the list needs.
import type { ConsoleRole } from '../db/schema.ts';

export type Permission =
  /** Any signed-in person: their own account, signing out */
  | 'self'
  /** Lists and pages without personal data beyond what is masked */
  | 'read'
  /** Customers' names, emails and addresses; cardholders */
  | 'personal'
  /** Keys, webhook URLs, events and redeliveries, the sandbox's clock and triggers */
  | 'developer'
  /** Captures, refunds, voids, disputes, card freezes, payouts, bank accounts, approvals, reports and statements */
  | 'finance'
  /** Risk rules and lists written, backtests run, reviews decided (docs/risk.md, Console) */
  | 'risk'
  /** The audit trail: a tenant's admins their tenant's records, operators every record */
  | 'audit'
  /** The team's people and their roles: a tenant's admins theirs, operators the operator's */
  | 'members'
  /** What only the operator sees: every partner */
  | 'operator'
  /** Compliance cases, screening hits, monitoring alerts and onboarding applications, worked and decided (docs/compliance.md, Console) */
  | 'compliance';

const GRANTS: Record<ConsoleRole, readonly Permission[]> = {
  viewer: ['self', 'read'],
  developer: ['self', 'read', 'personal', 'developer'],
  finance: ['self', 'read', 'personal', 'finance', 'risk'],
  admin: ['self', 'read', 'personal', 'developer', 'finance', 'risk', 'audit', 'members'],
  'operator-viewer': ['self', 'read', 'audit', 'operator'],
  // Compliance is its own duty: the operator's compliance officers work cases and review onboarding; an
  // operator does not (segregation of duties), and no tenant ever sees its own cases (tipping off).
  compliance: ['self', 'read', 'personal', 'audit', 'operator', 'compliance'],
  operator: ['self', 'read', 'personal', 'developer', 'finance', 'risk', 'audit', 'members', 'operator'],
};

export const allows = (role: ConsoleRole, permission: Permission): boolean =>
  GRANTS[role].includes(permission);

/** By route (method and path under /console): HEAD goes with GET. Public routes (sign-in) are not here. */
export const PERMISSIONS: Record<string, Permission> = {
  'GET /assets/:name': 'self',
  'GET /account': 'self',
  'POST /account/sign-out-everywhere': 'self',
  'POST /account/totp': 'self',
  'POST /account/totp/disable': 'self',
  'POST /sign-out': 'self',
  'GET /': 'read',
  'GET /search': 'read',
  'GET /sandbox': 'read',
  'POST /sandbox/clock': 'developer',
  'POST /sandbox/trigger': 'developer',
  'POST /sandbox/payouts/:id/bank': 'developer',
  'GET /risk/rules': 'read',
  'GET /risk/rules/new': 'risk',
  'POST /risk/rules/new': 'risk',
  'GET /risk/rules/:id': 'read',
  'GET /risk/rules/:id/edit': 'risk',
  'POST /risk/rules/:id/edit': 'risk',
  'GET /risk/rules/:id/delete': 'risk',
  'POST /risk/rules/:id/delete': 'risk',
  'GET /risk/backtest': 'risk',
  'POST /risk/backtest': 'risk',
  'GET /risk/lists': 'read',
  'GET /risk/lists/new': 'risk',
  'POST /risk/lists/new': 'risk',
  'GET /risk/lists/:id': 'read',
  'GET /risk/lists/:id/items': 'risk',
  'POST /risk/lists/:id/items': 'risk',
  'GET /risk/lists/:id/remove': 'risk',
  'POST /risk/lists/:id/remove': 'risk',
  'GET /risk/lists/:id/delete': 'risk',
  'POST /risk/lists/:id/delete': 'risk',
  'GET /risk/reviews': 'read',
  'GET /risk/reviews/:id': 'read',
  'GET /risk/reviews/:id/approve': 'risk',
  'POST /risk/reviews/:id/approve': 'risk',
  'GET /risk/reviews/:id/refuse': 'risk',
  'POST /risk/reviews/:id/refuse': 'risk',
  'GET /risk/decisions': 'read',
  'GET /compliance/cases': 'compliance',
  'GET /compliance/cases/:id': 'compliance',
  'GET /compliance/cases/:id/timeline.csv': 'compliance',
  'GET /compliance/cases/:id/goaml.xml': 'compliance',
  'POST /compliance/cases/:id/notes': 'compliance',
  'GET /compliance/cases/:id/assign': 'compliance',
  'POST /compliance/cases/:id/assign': 'compliance',
  'GET /compliance/cases/:id/clear': 'compliance',
  'POST /compliance/cases/:id/clear': 'compliance',
  'GET /compliance/cases/:id/confirm': 'compliance',
  'POST /compliance/cases/:id/confirm': 'compliance',
  'GET /compliance/screening': 'compliance',
  'GET /compliance/monitoring': 'compliance',
  'GET /compliance/onboarding': 'compliance',
  'GET /compliance/onboarding/invite': 'compliance',
  'POST /compliance/onboarding/invite': 'compliance',
  'GET /compliance/onboarding/:tenant': 'compliance',
  'GET /compliance/onboarding/:tenant/documents/:documentId': 'compliance',
  'GET /compliance/onboarding/:tenant/decide': 'compliance',
  'POST /compliance/onboarding/:tenant/decide': 'compliance',
  'GET /payments/orders': 'read',
  'GET /payments/orders.csv': 'read',
  'GET /payments/orders/:id': 'read',
  'GET /payments/transactions': 'read',
  'GET /payments/transactions.csv': 'read',
  'GET /payments/transactions/:id': 'read',
  'GET /payments/transactions/:id/capture': 'finance',
  'POST /payments/transactions/:id/capture': 'finance',
  'GET /payments/transactions/:id/refund': 'finance',
  'POST /payments/transactions/:id/refund': 'finance',
  'GET /payments/transactions/:id/void': 'finance',
  'POST /payments/transactions/:id/void': 'finance',
  'GET /payments/customers': 'personal',
  'GET /payments/customers.csv': 'personal',
  'GET /payments/customers/:id': 'personal',
  'GET /payments/cards': 'personal',
  'GET /payments/cards.csv': 'personal',
  'GET /payments/links': 'read',
  'GET /payments/links.csv': 'read',
  'GET /payments/sites': 'read',
  'GET /payments/sites.csv': 'read',
  'GET /payments/sites/:id': 'read',
  'GET /payments/sites/:id/ipn-url': 'developer',
  'POST /payments/sites/:id/ipn-url': 'developer',
  'GET /payments/sites/:id/rotate-key': 'developer',
  'POST /payments/sites/:id/rotate-key': 'developer',
  'GET /payments/disputes': 'read',
  'GET /payments/disputes.csv': 'read',
  'GET /payments/monitoring': 'read',
  'GET /payments/disputes/:id': 'read',
  'GET /payments/disputes/:id/accept': 'finance',
  'POST /payments/disputes/:id/accept': 'finance',
  'POST /payments/disputes/:id/evidence': 'finance',
  'GET /crypto/orders': 'read',
  'GET /crypto/orders.csv': 'read',
  'GET /crypto/orders/:id': 'read',
  'GET /crypto/refunds': 'read',
  'GET /crypto/refunds.csv': 'read',
  'GET /crypto/refunds/:id': 'read',
  'GET /crypto/stores': 'read',
  'GET /crypto/stores/:id': 'read',
  'GET /crypto/stores/:id/evm-wallet': 'developer',
  'POST /crypto/stores/:id/evm-wallet': 'developer',
  'GET /crypto/stores/:id/keys/new': 'developer',
  'POST /crypto/stores/:id/keys/new': 'developer',
  'GET /crypto/stores/:id/keys/:keyId/revoke': 'developer',
  'POST /crypto/stores/:id/keys/:keyId/revoke': 'developer',
  'GET /issuing/partners': 'operator',
  'GET /issuing/partners/:id': 'read',
  'GET /issuing/customers': 'personal',
  'GET /issuing/customers.csv': 'personal',
  'GET /issuing/customers/:id': 'personal',
  'GET /issuing/cards': 'read',
  'GET /issuing/cards.csv': 'read',
  'GET /issuing/cards/:id': 'read',
  'GET /issuing/cards/:id/freeze': 'finance',
  'POST /issuing/cards/:id/freeze': 'finance',
  'GET /issuing/cards/:id/unfreeze': 'finance',
  'POST /issuing/cards/:id/unfreeze': 'finance',
  'GET /issuing/challenges': 'read',
  'GET /issuing/challenges.csv': 'read',
  'GET /issuing/accounts': 'read',
  'GET /issuing/accounts.csv': 'read',
  'GET /issuing/accounts/:id/statement.csv': 'finance',
  'GET /issuing/transactions': 'read',
  'GET /issuing/transactions.csv': 'read',
  'GET /issuing/transactions/:id': 'read',
  'GET /issuing/topups': 'read',
  'GET /issuing/topups.csv': 'read',
  'GET /ledger/accounts': 'read',
  'GET /ledger/accounts.csv': 'read',
  'GET /ledger/accounts/:id': 'read',
  'GET /money/balances': 'read',
  'GET /money/payouts': 'read',
  'GET /money/payouts.csv': 'read',
  'GET /money/payouts/new': 'finance',
  'POST /money/payouts/new': 'finance',
  'GET /money/payouts/:id': 'read',
  'GET /money/payouts/:id/report.csv': 'finance',
  'GET /money/bank-accounts/:tenant': 'finance',
  'POST /money/bank-accounts/:tenant': 'finance',
  'GET /approvals': 'read',
  'GET /approvals.csv': 'read',
  'GET /approvals/:id': 'read',
  'GET /approvals/:id/approve': 'finance',
  'POST /approvals/:id/approve': 'finance',
  'GET /approvals/:id/reject': 'finance',
  'POST /approvals/:id/reject': 'finance',
  'GET /money/reports': 'finance',
  'POST /money/reports/reconcile': 'finance',
  'GET /money/reports/balance.csv': 'finance',
  'GET /money/reports/revenue.csv': 'finance',
  'GET /members': 'members',
  'GET /members/new': 'members',
  'POST /members/new': 'members',
  'GET /members/:id/role': 'members',
  'POST /members/:id/role': 'members',
  'GET /members/:id/remove': 'members',
  'POST /members/:id/remove': 'members',
  'GET /audit': 'audit',
  'GET /audit.csv': 'audit',
  'GET /developers/keys': 'developer',
  'GET /developers/keys/merchants/:merchantId/new': 'developer',
  'POST /developers/keys/merchants/:merchantId/new': 'developer',
  'GET /developers/keys/merchants/:merchantId/:keyId/revoke': 'developer',
  'POST /developers/keys/merchants/:merchantId/:keyId/revoke': 'developer',
  'GET /developers/webhooks': 'developer',
  'GET /developers/events': 'developer',
  'GET /developers/events/:id': 'developer',
  'GET /developers/events/:id/redeliver': 'developer',
  'POST /developers/events/:id/redeliver': 'developer',
};

/** The permission a route needs: its method (HEAD as GET) and its path under /console. */
export function permissionOf(method: string, url: string): Permission | undefined {
  const path = url.replace(/^\/console/, '') || '/';
  return PERMISSIONS[`${method === 'HEAD' ? 'GET' : method} ${path}`];
}
