// The admin API (docs/admin.md) under /admin: the operator's token, every write in the audit trail.

import { addAuditHooks } from '../platform/audit/audit-hooks.ts';
import type { ApiScope } from '../platform/http/api-module.ts';
import type { PlatformServices } from '../platform-services.ts';
import { requireAdmin } from './http/admin-auth.ts';
import { registerApprovalThresholdRoutes } from './http/approval-thresholds-routes.ts';
import { registerAuditRoutes } from './http/audit-routes.ts';
import { registerBankAccountRoutes } from './http/bank-accounts-routes.ts';
import { registerBusinessDocumentRoutes } from './http/business-documents-routes.ts';
import { registerBusinessProfileRoutes } from './http/business-profile-routes.ts';
import { registerComplianceCaseRoutes } from './http/compliance-cases-routes.ts';
import { registerComplianceRoutes } from './http/compliance-routes.ts';
import { registerConsoleUserRoutes } from './http/console-users-routes.ts';
import { registerEventRoutes } from './http/events-routes.ts';
import { registerIssuingCardRoutes } from './http/issuing-cards-routes.ts';
import { registerMerchantRoutes } from './http/merchants-routes.ts';
import { registerMoneyOutReportRoutes } from './http/money-out-report-routes.ts';
import { registerMoneyOutRoutes } from './http/money-out-routes.ts';
import { registerPartnerRoutes } from './http/partners-routes.ts';
import { presentAdminError } from './http/present-error.ts';
import { registerRiskListRoutes } from './http/risk-lists-routes.ts';
import { registerRiskReviewRoutes } from './http/risk-reviews-routes.ts';
import { registerRiskRuleRoutes } from './http/risk-rules-routes.ts';
import { registerStoreRoutes } from './http/stores-routes.ts';

export function adminApi(services: PlatformServices, adminToken: string): ApiScope {
  const adminDeps = {
    db: services.db,
    partners: services.partners,
    merchants: services.merchants,
    stores: services.stores,
    events: services.events,
    cards: services.issuing.cards,
    bankAccounts: services.bankAccounts,
    approvals: services.approvals,
    moneyOut: services.moneyOut,
    risk: services.risk,
    ledger: services.ledger,
    clock: services.clock,
    checkWebhookUrl: (url: string | null | undefined, field: string) =>
      services.ssrf.checkWebhookUrl(url, field),
  };
  return {
    name: 'admin',
    prefix: '/admin',
    title: 'Tessera admin API',
    version: '1.0.0',
    description: 'The operator onboards partners, merchants and stores, and inspects and redelivers events.',
    presenter: presentAdminError,
    securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } },
    security: [{ adminToken: [] }],
    // Every admin write is the operator's action: recorded in the audit trail with it.
    auditWrites: (routes) =>
      addAuditHooks(routes, {
        db: services.db,
        clock: services.clock,
        actorOf: () => ({ actorKind: 'admin_token', actor: 'admin token', tenant: null }),
      }),
    routes: async (routes) => {
      requireAdmin(routes, adminToken);
      await registerPartnerRoutes(routes, adminDeps);
      await registerMerchantRoutes(routes, adminDeps);
      await registerStoreRoutes(routes, adminDeps);
      await registerBankAccountRoutes(routes, adminDeps);
      await registerApprovalThresholdRoutes(routes, adminDeps);
      await registerMoneyOutRoutes(routes, adminDeps);
      await registerMoneyOutReportRoutes(routes, adminDeps);
      await registerRiskRuleRoutes(routes, adminDeps);
      await registerRiskListRoutes(routes, adminDeps);
      await registerRiskReviewRoutes(routes, adminDeps);
      await registerEventRoutes(routes, adminDeps);
      await registerIssuingCardRoutes(routes, adminDeps.cards);
      await registerConsoleUserRoutes(routes, services.consoleUsers);
      await registerAuditRoutes(routes, adminDeps);
      await registerComplianceRoutes(routes, { db: services.db, compliance: services.compliance });
      await registerComplianceCaseRoutes(routes, {
        db: services.db,
        clock: services.clock,
        compliance: services.compliance,
      });
      await registerBusinessDocumentRoutes(routes, { ...adminDeps, compliance: services.compliance });
      await registerBusinessProfileRoutes(routes, {
        ...adminDeps,
        compliance: services.compliance,
        invitations: services.onboardingInvitations,
      });
    },
  };
}
