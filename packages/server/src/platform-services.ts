// What the composition root (server.ts) builds and hands to what it mounts: the platform's capabilities,
// the rails and each API's services. A type only, so that what is mounted never imports the root.

import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { CryptoServices } from './crypto/crypto-services.ts';
import type { IssuingServices } from './issuing/issuing-services.ts';
import type { PaymentsServices } from './payments/payments-services.ts';
import type { Approvals } from './platform/approvals/approvals.ts';
import type { BankAccounts } from './platform/bank-accounts/bank-accounts.ts';
import type { Clock } from './platform/clock/clock.ts';
import type { Sweeps } from './platform/clock/sweeps.ts';
import type { ProcessRegistry } from './platform/cluster/process-registry.ts';
import type { Compliance } from './platform/compliance/compliance.ts';
import type { OnboardingInvitations } from './platform/compliance/onboarding-invitations.ts';
import type { ConsoleUsers } from './platform/console/console-users.ts';
import type { CapabilityTokens } from './platform/crypto/capability-tokens.ts';
import type { Encryptor } from './platform/crypto/encryption.ts';
import type { UnitOfWork } from './platform/db/connection-scope.ts';
import type { Db } from './platform/db/database.ts';
import type { Transact } from './platform/db/transact.ts';
import type { EventsService } from './platform/events/events-service.ts';
import type { Outbox } from './platform/events/outbox.ts';
import type { Metrics } from './platform/http/metrics.ts';
import type { IdempotencyStore } from './platform/idempotency/idempotency-store.ts';
import type { JobQueue } from './platform/jobs/job-queue.ts';
import type { Ledger } from './platform/ledger/ledger.ts';
import type { Risk } from './platform/risk/risk.ts';
import type { MerchantsService } from './platform/tenants/merchants-service.ts';
import type { PartnersService } from './platform/tenants/partners-service.ts';
import type { StoresService } from './platform/tenants/stores-service.ts';
import type { TenantCache } from './platform/tenants/tenant-cache.ts';
import type { DeliveryEngine } from './platform/webhooks/delivery-engine.ts';
import type { SsrfGuard } from './platform/webhooks/ssrf-guard.ts';
import type { MoneyOutWithBank } from './rails/bank/port.ts';
import type { Rails } from './rails/rails.ts';
import type { RailSandbox } from './rails/sandbox.ts';

export interface Platform {
  config: Config;
  db: Db;
  clock: Clock;
  /** Tokens that let a browser act on one object (hosted pages' forms and links) */
  capabilities: CapabilityTokens;
  /** Where sites and stores are paid out to (docs/payouts.md) */
  bankAccounts: BankAccounts;
  /** Fees, balances and payouts (docs/payouts.md) */
  moneyOut: MoneyOutWithBank;
  logger: Logger;
  transact: Transact;
  ledger: Ledger;
  outbox: Outbox;
  events: EventsService;
  deliveries: DeliveryEngine;
  partners: PartnersService;
  merchants: MerchantsService;
  stores: StoresService;
  /** Verified credentials and tenant settings, cleared by any tenant change in any process */
  tenantCache: TenantCache;
  idempotency: IdempotencyStore;
  /** A unit of work: one connection and transaction for a whole request (platform/db/connection-scope.ts) */
  createUnit: () => UnitOfWork;
  sweeps: Sweeps;
  processes: ProcessRegistry;
  jobs: JobQueue;
  metrics: Metrics;
  ssrf: SsrfGuard;
  /** The ports of the outside systems (rails/rails.ts chooses their adapters) */
  rails: Rails;
  /** What the sandbox API and the simulators' hosted pages may do to the rails beyond their ports */
  railSandbox: RailSandbox;
  /** Why a real rail cannot work now (readiness), each undefined when it can */
  railReadiness: (() => Promise<string | undefined>)[];
  /** The people who sign in to the console */
  consoleUsers: ConsoleUsers;
  /** Fraud rules, block and allow lists and their decisions at every decision point (docs/risk.md) */
  risk: Risk;
  /** The EU, UN and OFAC sanctions lists, screening against them, alerts, cases and holds (docs/compliance.md) */
  compliance: Compliance;
  /** Merchants and stores invited to the hosted onboarding page (docs/compliance.md, Onboarding) */
  onboardingInvitations: OnboardingInvitations;
  /** Four eyes on money: the tenants' policies and the requests waiting for a second person */
  approvals: Approvals;
  encryptor: Encryptor;
  /** The key everything encrypted or derived is made from (the APIs derive their own keys from it) */
  encryptionKey: Buffer;
  /** Common orders and authorizations are written in one statement (false in tests of the general path) */
  oneStatementWrites: boolean;
}

/** The platform with each API's services, as the operator's tools (admin, sandbox, console) reach them */
export interface PlatformServices extends Platform {
  issuing: IssuingServices;
  crypto: CryptoServices;
  payments: PaymentsServices;
}
