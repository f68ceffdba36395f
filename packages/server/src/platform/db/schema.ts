// Row types of the platform tables as Kysely sees them. NUMERIC and INT8 arrive as strings from pg
// and are turned into bigint by the stores, never into number.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Numeric = ColumnType<string, string | bigint, string | bigint>;
/** A NUMERIC column with a database default (omit it on insert) */
type NumericWithDefault = ColumnType<string, string | bigint | undefined, string | bigint>;

export interface SandboxStateTable {
  id: Generated<boolean>;
  clock_offset_ms: ColumnType<string, string | number, string | number>;
}

export interface BankAccountsTable {
  owner: string;
  iban_enc: string;
  iban_masked: string;
  country: string;
  bic: string | null;
  holder_name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface BankAccountChangesTable {
  id: string;
  owner: string;
  iban_enc: string;
  iban_masked: string;
  country: string;
  bic: string | null;
  holder_name: string;
  status: 'held' | 'applied' | 'refused';
  created_at: Timestamp;
  decided_at: Timestamp | null;
}

export interface FeeSchedulesTable {
  owner: string;
  percent_bps: number;
  fixed: ColumnType<Record<string, string>, string, string>;
  brands: ColumnType<Record<string, { percentBps: number; fixed: Record<string, string> }>, string, string>;
  refund_fees: boolean;
  updated_at: Timestamp;
}

export interface PayoutSchedulesTable {
  owner: string;
  interval: 'daily' | 'weekly' | 'monthly' | 'manual';
  weekly_anchor: string | null;
  monthly_anchor: number | null;
  minimum: string;
  delay_days: number;
  reserve_bps: number;
  reserve_days: number;
  updated_at: Timestamp;
}

export interface BalanceTransactionsTable {
  id: string;
  owner: string;
  currency: string;
  type: string;
  source_type: string;
  source_id: string;
  gross: Numeric;
  fee: Numeric;
  net: Numeric;
  created_at: Timestamp;
  available_at: Timestamp;
  payout_id: string | null;
}

export interface PayoutsTable {
  id: string;
  owner: string;
  currency: string;
  amount: Numeric;
  status: 'held' | 'pending' | 'in_transit' | 'paid' | 'failed' | 'returned';
  itemized: boolean;
  iban_enc: string;
  iban_masked: string;
  bic: string | null;
  holder_name: string;
  arrival_date: ColumnType<string | null, string | null, string | null>;
  failure_code: string | null;
  bank_file_id: string | null;
  scheduled_for: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PayoutRunDaysTable {
  owner: string;
  currency: string;
  day: string;
  paid: Generated<boolean>;
  seen: string | null;
  looked_at: Timestamp | null;
}

export interface BalanceDaysTable {
  owner: string;
  currency: string;
  /** YYYY-MM-DD */
  day: ColumnType<string, string, string>;
  gross: Numeric;
  fee: Numeric;
  net: Numeric;
  fee_count: ColumnType<string, string | number, string | number>;
  closing: Numeric;
}

export interface BalanceDaysSummedTable {
  day: ColumnType<string, string, string>;
  summed_at: Timestamp;
}

export interface ReconcileMarksTable {
  day: ColumnType<string, string, string>;
  sums: ColumnType<unknown, string, string>;
  proved_at: Timestamp;
}

export interface ReconcileRunsTable {
  id: Generated<string>;
  date: ColumnType<string, string, string>;
  full_run: boolean;
  clean: boolean;
  checked: ColumnType<Record<string, number>, string, string>;
  findings: ColumnType<unknown[], string, string>;
  duration_ms: number;
  ran_at: Timestamp;
}

export interface PayoutAssembliesTable {
  payout_id: string;
  owner: string;
  currency: string;
  cut_at: Timestamp;
  scheduled_for: string | null;
  items: ColumnType<string, string | number, string | number>;
  total: Numeric;
  started_at: Timestamp;
}

export interface BankFilesTable {
  id: string;
  message_id: string;
  currency: string;
  file_name: string;
  payout_count: number;
  total: Numeric;
  status: 'writing' | 'written';
  created_at: Timestamp;
}

export interface BankInboxFilesTable {
  sha256: string;
  file_name: string;
  kind: string;
  status: 'applied' | 'rejected';
  detail: string;
  unmatched: ColumnType<unknown[], string, string>;
  received_at: Timestamp;
}

export interface PartnersTable {
  id: string;
  partner_id: string;
  name: string;
  api_key_hash: string;
  webhook_signing_key_enc: string;
  webhook_url: string | null;
  webhook_redeliver_when_back: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MerchantsTable {
  id: Generated<number>;
  name: string;
  created_at: Timestamp;
}

export interface MerchantApiKeysTable {
  id: string;
  merchant_id: number;
  key_hash: string;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface SitesTable {
  id: Generated<number>;
  merchant_id: number;
  name: string;
  ipn_url: string | null;
  /** The site's secret key (IPN and result encryption, checksum, Bearer), encrypted */
  secret_key_enc: string;
  /** sha256 of the secret key: finds the site from a Bearer credential */
  secret_key_hash: string | null;
  /** The key before the last rotation, still valid until previous_secret_key_until */
  previous_secret_key_enc: string | null;
  previous_secret_key_hash: string | null;
  previous_secret_key_until: Date | null;
  /** Origins allowed to embed the site's hosted pages */
  frame_ancestors: ColumnType<string[], string[] | undefined, string[]>;
  /** What its hosted pages show of it (platform/tenants/brand.ts) */
  brand: ColumnType<unknown, string | undefined, string>;
  /** Its merchant category code and country, as authorizations carry them (migration 0060) */
  mcc: ColumnType<string | null, string | null | undefined, string | null>;
  country: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
}

export interface StoresTable {
  id: string;
  name: string;
  client_id: string;
  client_secret_hash: string;
  webhook_secret_enc: string;
  webhook_url: string | null;
  refunds_enabled: boolean;
  currencies: ColumnType<StoreCurrency[], string, string>;
  /** Origins allowed to embed the store's hosted pages */
  frame_ancestors: ColumnType<string[], string[] | undefined, string[]>;
  /** What its hosted pages show of it (platform/tenants/brand.ts) */
  brand: ColumnType<unknown, string | undefined, string>;
  evm_account_key: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface StoreCurrency {
  currency: string;
  network: string;
}

export interface LedgerAccountsTable {
  id: string;
  owner_type: string;
  owner_id: string;
  asset: string;
  purpose: string;
  is_bounded: boolean;
  posted: NumericWithDefault;
  pending_debits: NumericWithDefault;
  pending_credits: NumericWithDefault;
  created_at: Timestamp;
}

export interface LedgerTransactionsTable {
  id: string;
  operation_id: string;
  request_hash: string;
  kind: 'transfer' | 'hold' | 'hold_post';
  status: 'posted' | 'pending' | 'voided' | 'expired' | 'settled';
  asset: string;
  hold_id: string | null;
  expires_at: Timestamp | null;
  metadata: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
  resolved_at: Timestamp | null;
}

export interface LedgerEntriesTable {
  transaction_id: string;
  account_id: string;
  asset: string;
  amount: Numeric;
}

export type WebhookApi = 'issuing' | 'payments' | 'crypto';

export interface EventsTable {
  id: string;
  api: WebhookApi;
  tenant_id: string;
  type: string;
  payload: string;
  target_url: string | null;
  created_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  url: string;
  reason: 'event' | 'redelivery' | 'replay';
  status: 'pending' | 'succeeded' | 'failed' | 'waiting';
  attempt_count: Generated<number>;
  max_attempts: number;
  next_attempt_at: Timestamp | null;
  leased_until: Timestamp | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt_number: number;
  started_at: Timestamp;
  duration_ms: number;
  status_code: number | null;
  response_excerpt: string | null;
  error: string | null;
  succeeded: boolean;
  /** Cut short by a shutdown: recorded, not counted */
  abandoned: Generated<boolean>;
}

export interface IdempotencyKeysTable {
  /** The primary key (migration 0084): the first 16 bytes of SHA-256 of scope and key, as a uuid */
  key_digest: string;
  /** The other 16 bytes of that SHA-256 (migration 0087): a lookup compares the whole of it */
  key_check: Buffer;
  /** The request's SHA-256 (hashRequest) */
  request_sha256: Buffer;
  response_status: number;
  /** Null for 'application/json; charset=utf-8' (migration 0084) */
  response_content_type: string | null;
  /** The answer (its first byte says how it is kept: idempotency-store.ts); null once the replay window has passed */
  response_body: Buffer | null;
  /** An answer stored as text before migration 0078 (null once its replay window has passed) */
  response_body_enc: string | null;
  created_at: Timestamp;
  /**
   * When a sweep next acts on the row (migration 0087): the replay window's end while it holds its answer,
   * then the retention's end, until when the key is refused for a new request
   */
  due_at: Timestamp;
}

export interface TesseraProcessesTable {
  id: string;
  pid: number;
  host: string;
  started_at: Timestamp;
  seen_at: Timestamp;
  clock_offset_ms: ColumnType<string, string | number | undefined, string | number>;
  /** The newest tenant change (tenant_changes_seq) this process has heard of */
  tenants_version: ColumnType<string, string | number | undefined, string | number>;
}

export interface RateLimitWindowsTable {
  key: string;
  window_start: Timestamp;
  granted: number;
}

/** A risk rule (docs/risk.md): a CEL expression at one decision point of one scope */
export interface RiskRulesTable {
  id: string;
  scope: string;
  decision_point: string;
  name: string;
  expression: string;
  action: string;
  mode: 'active' | 'shadow';
  priority: number;
  velocity_features: ColumnType<string[], string[] | undefined, string[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface RiskListsTable {
  id: string;
  scope: string;
  name: string;
  kind: string;
  created_at: Timestamp;
}

export interface RiskListItemsTable {
  list_id: string;
  value: string;
  created_at: Timestamp;
}

/** One evaluation at a decision point: velocity's keys, and every attribute as it was (backtests) */
export interface RiskSignalsTable {
  id: Generated<string>;
  decision_point: string;
  tenant: string;
  object_id: string;
  at: Timestamp;
  amount: Numeric;
  currency: string;
  ip: string | null;
  email: string | null;
  card_fingerprint: string | null;
  customer_id: string | null;
  declined: boolean;
  attributes: ColumnType<Record<string, unknown>, string, string>;
}

/** An official sanctions list file, imported once (docs/compliance.md) */
export interface SanctionsImportsTable {
  id: Generated<string>;
  source: string;
  sha256: string;
  generated_at: Timestamp | null;
  imported_at: Timestamp;
  imported_by: string;
  entries: number;
  added: number;
  changed: number;
  removed: number;
}

/** One version of a sanctions list's entry */
export interface SanctionsEntriesTable {
  id: Generated<string>;
  source: string;
  source_id: string;
  version: number;
  content: ColumnType<Record<string, unknown>, string, string>;
  content_sha256: string;
  added_by: string;
  closed_by: string | null;
}

/** A name the platform screens against the sanctions lists (migration 0064) */
export interface CompliancePartiesTable {
  id: Generated<string>;
  kind: string;
  reference: string;
  subject: string;
  tenant: string;
  name: string;
  date_of_birth: string | null;
  country: string | null;
  content_sha256: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  retired_at: Timestamp | null;
}

export type BusinessProfileStatus = 'draft' | 'submitted' | 'approved' | 'rejected' | 'more_information';

/** A merchant's or a store's business profile and its review (migration 0066) */
export interface BusinessProfilesTable {
  tenant: string;
  status: BusinessProfileStatus;
  profile: ColumnType<Record<string, unknown>, string, string>;
  decision_reason: string | null;
  submitted_at: Timestamp | null;
  decided_at: Timestamp | null;
  decided_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type ComplianceCaseStatus = 'open' | 'cleared' | 'confirmed';

export interface ComplianceCasesTable {
  id: Generated<string>;
  subject: string;
  tenant: string;
  status: ComplianceCaseStatus;
  assignee: string | null;
  opened_at: Timestamp;
  decided_at: Timestamp | null;
  decided_by: string | null;
  decision_reason: string | null;
  /** A decision waiting for a second person (migration 0067) */
  proposed_decision: ColumnType<CaseDecisionName | null, CaseDecisionName | null | undefined>;
  proposed_reason: ColumnType<string | null, string | null | undefined>;
  proposed_by: ColumnType<string | null, string | null | undefined>;
  proposed_at: ColumnType<Date | null, Date | string | null | undefined>;
}

export type CaseDecisionName = 'cleared' | 'confirmed';

export interface ComplianceAlertsTable {
  id: Generated<string>;
  case_id: string;
  tenant: string;
  party_id: string | null;
  party_sha256: string | null;
  kind: string;
  entry_id: string | null;
  scenario_key: string | null;
  score: Numeric;
  evidence: ColumnType<Record<string, unknown>, string, string>;
  created_at: Timestamp;
}

export interface ComplianceCaseNotesTable {
  id: Generated<string>;
  case_id: string;
  author: string;
  body: string;
  created_at: Timestamp;
}

export interface ComplianceHoldsTable {
  id: Generated<string>;
  case_id: string;
  subject: string;
  object_kind: string;
  object_id: string;
  previous_status: string | null;
  placed_at: Timestamp;
  released_at: Timestamp | null;
}

export interface BusinessProfileDocumentsTable {
  id: Generated<string>;
  tenant: string;
  kind: string;
  filename: string;
  content_type: string;
  bytes: number;
  sha256: string;
  content_enc: string;
  uploaded_by: string;
  uploaded_at: Timestamp;
}

export interface ComplianceScenarioRunsTable {
  scenario: string;
  through: Timestamp;
}

export interface OnboardingInvitationsTable {
  id: Generated<string>;
  tenant: string;
  email: string;
  token_sha256: string;
  invited_by: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  closed_at: ColumnType<Date | null, Date | string | null | undefined>;
  closed_as: ColumnType<'finished' | 'replaced' | null, 'finished' | 'replaced' | null | undefined>;
}

export interface ComplianceRescreensTable {
  import_id: string;
  cursor: Generated<string>;
  screened: Generated<string>;
  alerts: Generated<number>;
  started_at: Timestamp;
  finished_at: Timestamp | null;
}

/** A tenant's signals at a point in one whole minute and currency: its velocity windows (docs/risk.md) */
export interface RiskSignalMinutesTable {
  tenant: string;
  decision_point: string;
  minute: Timestamp;
  currency: string;
  signals: Numeric;
  amount: Numeric;
  declines: Numeric;
}

/** Up to where a tenant's point is rolled up into risk_signal_minutes */
export interface RiskSignalMinutesFrontierTable {
  tenant: string;
  decision_point: string;
  through: Timestamp;
}

/** A rule that matched, with the values it read */
export interface RiskDecisionsTable {
  id: Generated<string>;
  tenant: string;
  decision_point: string;
  object_id: string;
  rule_id: string;
  rule_name: string;
  action: string;
  mode: string;
  acted: boolean;
  attributes: ColumnType<Record<string, unknown>, string, string>;
  at: Timestamp;
}

/** A charge a risk rule sent to review */
export interface RiskReviewsTable {
  id: string;
  tenant: string;
  decision_point: string;
  object_id: string;
  rule_id: string;
  rule_name: string;
  status: 'pending' | 'approved' | 'refused' | 'expired';
  created_at: Timestamp;
  expires_at: Timestamp;
  decided_at: Timestamp | null;
  decided_by: string | null;
}

export interface PlatformTables {
  risk_reviews: RiskReviewsTable;
  risk_rules: RiskRulesTable;
  risk_lists: RiskListsTable;
  risk_list_items: RiskListItemsTable;
  risk_signals: RiskSignalsTable;
  sanctions_imports: SanctionsImportsTable;
  sanctions_entries: SanctionsEntriesTable;
  compliance_parties: CompliancePartiesTable;
  business_profiles: BusinessProfilesTable;
  compliance_cases: ComplianceCasesTable;
  compliance_alerts: ComplianceAlertsTable;
  compliance_case_notes: ComplianceCaseNotesTable;
  compliance_holds: ComplianceHoldsTable;
  compliance_rescreens: ComplianceRescreensTable;
  onboarding_invitations: OnboardingInvitationsTable;
  compliance_scenario_runs: ComplianceScenarioRunsTable;
  business_profile_documents: BusinessProfileDocumentsTable;
  risk_signal_minutes: RiskSignalMinutesTable;
  risk_signal_minutes_frontier: RiskSignalMinutesFrontierTable;
  risk_decisions: RiskDecisionsTable;
  tessera_processes: TesseraProcessesTable;
  rate_limit_windows: RateLimitWindowsTable;
  sandbox_state: SandboxStateTable;
  partners: PartnersTable;
  bank_accounts: BankAccountsTable;
  bank_account_changes: BankAccountChangesTable;
  fee_schedules: FeeSchedulesTable;
  payout_schedules: PayoutSchedulesTable;
  balance_transactions: BalanceTransactionsTable;
  payouts: PayoutsTable;
  payout_run_days: PayoutRunDaysTable;
  balance_days: BalanceDaysTable;
  balance_days_summed: BalanceDaysSummedTable;
  reconcile_marks: ReconcileMarksTable;
  reconcile_runs: ReconcileRunsTable;
  payout_assemblies: PayoutAssembliesTable;
  bank_files: BankFilesTable;
  bank_inbox_files: BankInboxFilesTable;
  merchants: MerchantsTable;
  merchant_api_keys: MerchantApiKeysTable;
  sites: SitesTable;
  stores: StoresTable;
  ledger_accounts: LedgerAccountsTable;
  /** A view (migration 0034): each account with its deltas not yet rolled up added */
  ledger_balances: LedgerAccountsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  events: EventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  idempotency_keys: IdempotencyKeysTable;
}

export interface SandboxMessagesTable {
  id: string;
  channel: 'email' | 'sms';
  recipient: string;
  subject_enc: string;
  body_enc: string;
  created_at: Timestamp;
}

export interface OutboundMailTable {
  id: string;
  recipient: string;
  subject_enc: string;
  body_enc: string;
  status: 'pending' | 'sent' | 'failed';
  attempt_count: Generated<number>;
  next_attempt_at: Timestamp;
  leased_until: Timestamp | null;
  last_error: string | null;
  smtp_response: string | null;
  sent_at: Timestamp | null;
  created_at: Timestamp;
}

export interface IssuingCustomersTable {
  id: string;
  partner_id: string;
  external_user_id: string | null;
  email: string | null;
  email_verified_at: Timestamp | null;
  password_hash: string | null;
  wallet_address: string | null;
  status: 'pending_verification' | 'active';
  two_factor_enabled: Generated<boolean>;
  failed_logins: Generated<number>;
  locked_until: Timestamp | null;
  created_at: Timestamp;
}

export interface IssuingRefreshTokensTable {
  id: string;
  customer_id: string;
  family_id: string;
  token_hash: string;
  status: 'active' | 'rotated' | 'revoked';
  expires_at: Timestamp;
  created_at: Timestamp;
}

export interface IssuingAuthChallengesTable {
  id: string;
  partner_id: string;
  purpose: 'email_verification' | 'wallet_register' | 'wallet_login' | 'two_factor';
  customer_id: string | null;
  subject: string;
  code_hash: string | null;
  message: string | null;
  attempts: Generated<number>;
  sends: Generated<number>;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
  created_at: Timestamp;
}

export type KycStatus = 'not_started' | 'in_progress' | 'pending_review' | 'approved' | 'rejected';
export type KycDocumentKind = 'identity' | 'proof_of_address';

export interface IssuingKycTable {
  customer_id: string;
  status: KycStatus;
  reject_reason: string | null;
  steps: ColumnType<Record<string, unknown>, string | undefined, string>;
  updated_at: Timestamp;
}

export interface IssuingKycVerificationsTable {
  id: string;
  customer_id: string;
  kind: KycDocumentKind;
  status: 'started' | 'verified' | 'rejected';
  vendor_session_id: string;
  reject_reason: string | null;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface KycVendorSessionsTable {
  id: string;
  reference: string;
  kind: KycDocumentKind;
  status: 'open' | 'verified' | 'rejected';
  reject_reason: string | null;
  document_name: string | null;
  document_type: string | null;
  document_bytes: number | null;
  document_sha256: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

export interface IssuingAccountsTable {
  id: string;
  seq: Generated<string>;
  customer_id: string;
  partner_id: string;
  currency: string;
  status: 'open' | 'closed';
  ledger_account_id: string;
  created_at: Timestamp;
  closed_at: Timestamp | null;
}

export type CardStatus = 'pending' | 'readyToBeActivated' | 'active' | 'suspended' | 'frozen' | 'closed';

export interface IssuingCardsTable {
  id: string;
  seq: Generated<string>;
  customer_id: string;
  partner_id: string;
  account_id: string;
  product_id: string;
  is_virtual: boolean;
  label: string | null;
  status: CardStatus;
  pan_enc: string;
  cvv_enc: string;
  pin_enc: string | null;
  pan_fingerprint: string;
  bin: string;
  last4: string;
  expiry_month: number;
  expiry_year: number;
  delivery_address: ColumnType<Record<string, string> | null, string | null, string | null>;
  replaces_card_id: string | null;
  reissue_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface IssuingCardSecretRevealsTable {
  id: Generated<string>;
  card_id: string;
  customer_id: string;
  request_id: string;
  ip: string;
  revealed_at: Timestamp;
}

export type IssuingTransactionStatus =
  | 'pending_3ds'
  | 'authorized'
  | 'declined'
  | 'settled'
  | 'reversed'
  | 'expired';
export type ThreeDsStatus = 'pending' | 'authorized' | 'declined' | 'cancelled' | 'timeout' | 'failed';

/** A cardholder's approved card payments of one UTC day in one currency (migration 0072) */
export interface IssuingCardholderDailySpendTable {
  customer_id: string;
  currency: string;
  day: ColumnType<string, string, string>;
  partner_id: string;
  spent: Numeric;
  payments: number;
}

export interface IssuingTransactionsTable {
  id: string;
  seq: Generated<string>;
  customer_id: string;
  partner_id: string;
  card_id: string;
  account_id: string;
  type: 'card_payment' | 'refund';
  status: IssuingTransactionStatus;
  currency: string;
  amount: Numeric;
  settled_amount: Numeric | null;
  merchant: string;
  decline_reason: string | null;
  hold_id: string | null;
  hold_expires_at: Timestamp | null;
  created_at: Timestamp;
  authorized_at: Timestamp | null;
  settled_at: Timestamp | null;
  updated_at: Timestamp;
  /** The card network's reference when the payment came through the payments API (on-us) */
  network_reference: ColumnType<string | null, string | null | undefined, string | null>;
  /** Still held for the clearings to come (migration 0036); null: never held */
  held_amount: ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;
  refunded_amount: NumericWithDefault;
  /** What open and won disputes claim of it (migration 0037) */
  disputed_amount: NumericWithDefault;
  clearing_count: ColumnType<number, number | undefined, number>;
  force_post: ColumnType<boolean, boolean | undefined, boolean>;
  /** A refund: the payment it refunds */
  original_transaction_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The authorization request's merchant data (migration 0054) */
  mcc: ColumnType<string | null, string | null | undefined, string | null>;
  merchant_country: ColumnType<string | null, string | null | undefined, string | null>;
  merchant_id: ColumnType<string | null, string | null | undefined, string | null>;
  channel: ColumnType<string | null, string | null | undefined, string | null>;
  /** '<scope>.<control>' of the spending control that declined it */
  declined_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export type IssuingDisputeStatus = 'under_review' | 'won' | 'lost';

export interface IssuingDisputesTable {
  id: string;
  seq: Generated<string>;
  partner_id: string;
  customer_id: string;
  transaction_id: string;
  account_id: string;
  currency: string;
  amount: Numeric;
  reason: string;
  explanation: string | null;
  status: IssuingDisputeStatus;
  provisional_credit: NumericWithDefault;
  unrecovered_amount: NumericWithDefault;
  decide_at: Timestamp;
  created_at: Timestamp;
  decided_at: Timestamp | null;
  updated_at: Timestamp;
}

export interface Issuing3dsChallengesTable {
  id: string;
  transaction_id: string;
  customer_id: string;
  status: ThreeDsStatus;
  auth_type: string | null;
  requested_at: Timestamp;
  expires_at: Timestamp;
  decided_at: Timestamp | null;
}

export type TopupStatus = 'pending' | 'confirming' | 'completed' | 'expired';

export interface IssuingTopupsTable {
  id: string;
  seq: Generated<string>;
  customer_id: string;
  partner_id: string;
  account_id: string;
  kind: 'fiat' | 'crypto';
  method: 'bank_transfer' | 'card' | 'crypto';
  status: TopupStatus;
  /** A risk rule's challenge: its payment by card asks for 3-D Secure (issuing/topups/topup-risk.ts) */
  risk_challenge: ColumnType<boolean, boolean | undefined, boolean>;
  currency: string;
  amount: Numeric;
  reference: string;
  expires_at: Timestamp;
  created_at: Timestamp;
  completed_at: Timestamp | null;
  network_reference: ColumnType<string | null, string | null | undefined, string | null>;
  last_decline: ColumnType<string | null, string | null | undefined, string | null>;
  crypto_asset: ColumnType<string | null, string | null | undefined, string | null>;
  crypto_network: ColumnType<string | null, string | null | undefined, string | null>;
  crypto_amount: ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;
  deposit_address: ColumnType<string | null, string | null | undefined, string | null>;
  rate_e18: ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;
  fee: ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;
  crypto_received: ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;
  credited_amount: ColumnType<string | null, string | bigint | null | undefined, string | bigint | null>;
  confirmations: ColumnType<number | null, number | null | undefined, number | null>;
  confirmations_required: ColumnType<number | null, number | null | undefined, number | null>;
  transfer_broadcast_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The chain transfer the top-up waits on (its transaction hash) */
  transfer_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface IssuingTopupQuotesTable {
  id: string;
  customer_id: string;
  asset: string;
  network: string;
  currency: string;
  rate_e18: Numeric;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface IssuingTables {
  issuing_topups: IssuingTopupsTable;
  issuing_topup_quotes: IssuingTopupQuotesTable;
  issuing_transactions: IssuingTransactionsTable;
  issuing_cardholder_daily_spend: IssuingCardholderDailySpendTable;
  issuing_disputes: IssuingDisputesTable;
  issuing_3ds_challenges: Issuing3dsChallengesTable;
  issuing_cards: IssuingCardsTable;
  issuing_card_secret_reveals: IssuingCardSecretRevealsTable;
  issuing_accounts: IssuingAccountsTable;
  issuing_kyc: IssuingKycTable;
  issuing_kyc_verifications: IssuingKycVerificationsTable;
  kyc_vendor_sessions: KycVendorSessionsTable;
  issuing_customers: IssuingCustomersTable;
  issuing_refresh_tokens: IssuingRefreshTokensTable;
  issuing_auth_challenges: IssuingAuthChallengesTable;
  issuing_spending_controls: IssuingSpendingControlsTable;
  issuing_spend_counters: IssuingSpendCountersTable;
}

/** A scope's spending controls (migration 0054; issuing/cards/spending-controls.ts) */
export interface IssuingSpendingControlsTable {
  subject_id: string;
  scope: 'partner' | 'account' | 'card' | 'cardholder';
  partner_id: string;
  controls: ColumnType<unknown, string, string>;
  updated_at: Timestamp;
}

/** A card's or an account's spend in the current UTC day and month and over its life (migration 0054) */
export interface IssuingSpendCountersTable {
  subject_id: string;
  day: ColumnType<Date, string, string>;
  day_amount: NumericWithDefault;
  day_count: ColumnType<number, number | undefined, number>;
  month: ColumnType<Date, string, string>;
  month_amount: NumericWithDefault;
  lifetime_amount: NumericWithDefault;
}

type Json<T> = ColumnType<T, string, string>;

export interface FxRateOverridesTable {
  from_currency: string;
  to_currency: string;
  rate_e18: Numeric;
  updated_at: Timestamp;
}

export interface ChainAddressesTable {
  address: string;
  network: string;
  asset: string;
  reference: string;
  created_at: Timestamp;
}

export interface ChainTransfersTable {
  id: string;
  seq: Generated<string>;
  network: string;
  asset: string;
  direction: 'in' | 'out';
  address: string;
  amount: Numeric;
  offramp: ColumnType<boolean, boolean | undefined, boolean>;
  reference: string;
  /** The sending address of an incoming transfer (migration 0071) */
  sender: ColumnType<string | null, string | null | undefined, string | null>;
  status: 'pending' | 'confirmed' | 'reverted';
  confirmations_required: number;
  broadcast_at: Timestamp;
  confirms_at: Timestamp;
  confirmed_at: Timestamp | null;
}

export interface RailTables {
  fx_rate_overrides: FxRateOverridesTable;
  chain_addresses: ChainAddressesTable;
  chain_transfers: ChainTransfersTable;
  evm_account_keys: EvmAccountKeysTable;
  evm_addresses: EvmAddressesTable;
  evm_scan_state: EvmScanStateTable;
  evm_blocks: EvmBlocksTable;
  evm_transfers: EvmTransfersTable;
  evm_nonces: EvmNoncesTable;
}

export interface EvmAccountKeysTable {
  account_key: string;
  next_index: ColumnType<number, number | undefined, number>;
}

export interface EvmAddressesTable {
  address: string;
  network: string;
  asset: string;
  reference: string;
  account_key: string;
  derivation_index: number;
  created_at: Timestamp;
}

export interface EvmScanStateTable {
  network: string;
  chain_id: Numeric;
  block_number: Numeric;
  block_hash: string;
  problem: string | null;
  checked_at: Timestamp;
}

export interface EvmBlocksTable {
  network: string;
  number: Numeric;
  hash: string;
  parent_hash: string;
}

/** One signed version of a payout: replacements share the nonce, so at most one is ever mined. */
export interface EvmPayoutAttempt {
  hash: string;
  raw: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  gas: string;
  signedAt: string;
}

export interface EvmTransfersTable {
  id: string;
  network: string;
  asset: string;
  direction: 'in' | 'out';
  address: string;
  amount: Numeric;
  reference: string;
  /** The sending address of an incoming transfer (migration 0071) */
  sender: ColumnType<string | null, string | null | undefined, string | null>;
  status: 'queued' | 'broadcast' | 'pending' | 'confirmed' | 'reverted' | 'failed';
  confirmations_required: number;
  tx_hash: string | null;
  block_number: Numeric | null;
  block_hash: string | null;
  nonce: Numeric | null;
  attempts: ColumnType<EvmPayoutAttempt[], string | undefined, string>;
  last_broadcast_at: Timestamp | null;
  last_error: string | null;
  created_at: Timestamp;
  confirmed_at: Timestamp | null;
}

export interface EvmNoncesTable {
  network: string;
  sender: string;
  next_nonce: Numeric;
}

export interface CryptoApiKeysTable {
  id: string;
  store_id: string;
  key_hash: string;
  mode: 'test' | 'live';
  created_at: Timestamp;
  revoked_at: Timestamp | null;
}

/** A crypto order's statuses (the API's filter and the console's list take them from here) */
export const CRYPTO_ORDER_STATUSES = [
  'pending',
  'paid',
  'expired',
  'canceled',
  'refund_proposed',
  'refund_processing',
  'refund_completed',
] as const;
export type CryptoOrderStatus = (typeof CRYPTO_ORDER_STATUSES)[number];

export interface CryptoOrderCustomer {
  first_name?: string;
  last_name?: string;
  email: string;
  address1?: string;
  address2?: string;
  city?: string;
  state?: string;
  postcode?: string;
  country: string;
}

export interface CryptoLineItem {
  sku?: string;
  name: string;
  price: string;
  currency: string;
  quantity: number;
}

export interface CryptoOrdersTable {
  id: string;
  seq: Generated<string>;
  store_id: string;
  reference: string;
  status: CryptoOrderStatus;
  currency: string;
  total: Numeric;
  amount_details: Json<Record<string, string> | null>;
  line_items: Json<CryptoLineItem[]>;
  customer: Json<CryptoOrderCustomer>;
  return_url: string;
  cancel_url: string | null;
  callback_url: string | null;
  pay_asset: string | null;
  pay_network: string | null;
  deposit_address: string | null;
  quote_id: string | null;
  payment_locked: ColumnType<boolean, boolean | undefined, boolean>;
  /** Held by a risk rule's review: no deposit address is shown until approved */
  in_review: ColumnType<boolean, boolean | undefined, boolean>;
  payment_id: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CryptoQuotesTable {
  id: string;
  store_id: string;
  order_id: string | null;
  kind: 'crypto' | 'fiat';
  from_currency: string;
  to_currency: string;
  rate_e18: Numeric;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
}

export interface CryptoDepositsTable {
  id: string;
  seq: Generated<string>;
  order_id: string;
  store_id: string;
  asset: string;
  network: string;
  amount: Numeric;
  rate_e18: Numeric;
  fiat_value: Numeric;
  requoted: boolean;
  late: boolean;
  offramp: boolean;
  /** Who paid, where the chain said (migration 0071) */
  sender: ColumnType<string | null, string | null | undefined, string | null>;
  status: 'detected' | 'confirmed' | 'reverted';
  inclusions: ColumnType<number, number | undefined, number>;
  confirmations_required: number;
  ledger_hold_id: string;
  detected_at: Timestamp;
  confirmed_at: Timestamp | null;
}

export interface CryptoPaymentsTable {
  id: string;
  order_id: string;
  store_id: string;
  currency: string;
  total: Numeric;
  asset: string;
  network: string;
  crypto_amount: Numeric;
  rate_e18: Numeric;
  offramp: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type CryptoRefundStatus = 'proposed' | 'accepted' | 'rejected' | 'complete' | 'expired';

export interface CryptoRefundsTable {
  id: string;
  seq: Generated<string>;
  payment_id: string;
  order_id: string;
  store_id: string;
  status: CryptoRefundStatus;
  amount: Numeric;
  currency: string;
  reason: string | null;
  crypto_amount: Numeric;
  asset: string;
  network: string;
  refund_address: string | null;
  order_status_before: CryptoOrderStatus;
  decision_token_hash: string;
  ledger_hold_id: string | null;
  payout_id: string | null;
  /** Held by a risk rule's review: the buyer cannot decide until approved */
  in_review: ColumnType<boolean, boolean | undefined, boolean>;
  expires_at: Timestamp;
  created_at: Timestamp;
  decided_at: Timestamp | null;
  completed_at: Timestamp | null;
}

export interface CryptoTables {
  crypto_api_keys: CryptoApiKeysTable;
  crypto_orders: CryptoOrdersTable;
  crypto_quotes: CryptoQuotesTable;
  crypto_deposits: CryptoDepositsTable;
  crypto_payments: CryptoPaymentsTable;
  crypto_refunds: CryptoRefundsTable;
}

type IntWithDefault = ColumnType<number, number | undefined, number>;
type Identity = ColumnType<number, number | undefined, never>;

export interface PaymentsCustomersTable {
  id: Identity;
  merchant_id: number;
  site_id: number;
  identifier: string;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  country: string | null;
  state: string | null;
  city: string | null;
  zip_code: string | null;
  address: string | null;
  phone: string | null;
  created_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface PaymentsCardsTable {
  id: Identity;
  merchant_id: number;
  customer_id: number;
  token: string;
  kind: 'card' | 'networkToken';
  brand: string;
  bin: string;
  last4: string;
  expiry_month: number;
  expiry_year: number;
  name_on_card: string | null;
  holder_country: string | null;
  holder_state: string | null;
  pan_enc: string;
  order_id: number | null;
  status: 'active' | 'deleted';
  created_at: Timestamp;
  deleted_at: Timestamp | null;
  /** Keyed fingerprint of the number (one stored card per card and customer) */
  pan_fingerprint: string | null;
}

export type PaymentsOrderType = 'purchase' | 'recurring' | 'managed' | 'credit';
/** A payments order's statuses (the API's filter and the console's list take them from here) */
export const PAYMENTS_ORDER_STATUSES = [
  'start',
  'in-progress',
  'retrying',
  'expiring',
  'complete-ok',
  'complete-failed',
  'canceled',
] as const;
export type PaymentsOrderStatus = (typeof PAYMENTS_ORDER_STATUSES)[number];
export type PaymentsCardMode = 'auth' | 'authAndCapture' | 'credit';

export interface PaymentsOrdersTable {
  id: Identity;
  merchant_id: number;
  site_id: number;
  customer_id: number;
  order_type: PaymentsOrderType;
  status: PaymentsOrderStatus;
  amount: Numeric;
  currency: string;
  description: string | null;
  external_order_id: string | null;
  external_custom_data: string | null;
  card_transaction_mode: PaymentsCardMode;
  transaction_method: 'card' | 'wallet';
  card_id: number | null;
  back_url: string | null;
  invoice_email: string | null;
  ip: string | null;
  level3_data: string | null;
  split_schema: string | null;
  interval_type: 'day' | 'month' | null;
  interval_value: number | null;
  trial_amount: Numeric | null;
  first_bill_date: Timestamp | null;
  retry_payment: string[] | null;
  anchor_at: Timestamp | null;
  bills_done: IntWithDefault;
  retries_done: IntWithDefault;
  next_bill_at: Timestamp | null;
  payment_link_hash: string | null;
  /** Made by the hosted checkout or its embedded form (the browser returns with the encrypted result) */
  checkout: 'hosted' | 'embedded' | null;
  /** A card-save checkout: its authorization is voided once approved */
  card_verification: Generated<boolean>;
  /** The hosted checkout page's one-time attempt id (a second post of the page finds this order) */
  checkout_attempt: string | null;
  cancel_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A payments transaction's statuses (the API's filter and the console's list take them from here) */
export const PAYMENTS_TRANSACTION_STATUSES = [
  'start',
  'in-progress',
  'complete-ok',
  'complete-failed',
  'cancel-ok',
  'refund-ok',
  'void-ok',
  '3d-pending',
  'charge-back',
] as const;
export type PaymentsTransactionStatus = (typeof PAYMENTS_TRANSACTION_STATUSES)[number];

export interface PaymentsTransactionsTable {
  id: Identity;
  merchant_id: number;
  site_id: number;
  order_id: number;
  customer_id: number;
  card_id: number | null;
  parent_id: number | null;
  type: 'deposit' | 'refund' | 'credit' | 'chargeback' | 'representment';
  status: PaymentsTransactionStatus;
  method: 'card' | 'wallet';
  mode: PaymentsCardMode;
  initiator: 'customer' | 'merchant';
  amount: Numeric;
  captured_amount: NumericWithDefault;
  refunded_amount: NumericWithDefault;
  /** What chargebacks took of a deposit, less what representments gave back (migration 0038) */
  charged_back_amount: NumericWithDefault;
  currency: string;
  card_brand: string | null;
  card_bin: string | null;
  card_last4: string | null;
  card_holder_name: string | null;
  /** MM/YY */
  card_expiry: string | null;
  is_3d: ColumnType<boolean, boolean | undefined, boolean>;
  network_reference: string | null;
  error_code: number | null;
  error_message: string | null;
  decline_reason: string | null;
  reason: string | null;
  message: string | null;
  auth_expires_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PaymentsLinksTable {
  hash: string;
  seq: Generated<string>;
  merchant_id: number;
  site_id: number;
  order_type: 'purchase' | 'recurring';
  amount: Numeric;
  currency: string;
  description: string | null;
  content_type: string;
  items: string | null;
  interval_type: 'day' | 'month' | null;
  interval_value: number | null;
  active: boolean;
  expires_at: Timestamp | null;
  usage_limit: number | null;
  back_url: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface PaymentsTables {
  payments_customers: PaymentsCustomersTable;
  payments_cards: PaymentsCardsTable;
  payments_orders: PaymentsOrdersTable;
  payments_transactions: PaymentsTransactionsTable;
  payments_disputes: PaymentsDisputesTable;
  payments_dispute_evidence: PaymentsDisputeEvidenceTable;
  payments_links: PaymentsLinksTable;
}

export interface CardNetworkAuthorizationsTable {
  reference: string;
  owner: string;
  route: 'simulator' | 'on-us';
  currency: string;
  amount: Numeric;
  captured: NumericWithDefault;
  refunded: NumericWithDefault;
  status: 'approved' | 'declined' | 'challenge' | 'released';
  decline_reason: string | null;
  reconcile_at: Timestamp | null;
  created_at: Timestamp;
  /** A test card the network disputes after capture: the reason, and when (migration 0038) */
  dispute_reason: ColumnType<string | null, string | null | undefined, string | null>;
  dispute_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export type PaymentsDisputeStatus = 'needs_response' | 'under_review' | 'won' | 'lost' | 'accepted';

export interface PaymentsDisputesTable {
  id: Identity;
  merchant_id: number;
  site_id: number;
  order_id: number;
  transaction_id: number;
  chargeback_transaction_id: number;
  representment_transaction_id: number | null;
  currency: string;
  amount: Numeric;
  fee: Numeric;
  uncovered_amount: NumericWithDefault;
  network: string;
  reason_code: string;
  status: PaymentsDisputeStatus;
  planned_outcome: 'won' | 'lost' | null;
  evidence_text: ColumnType<Record<string, string> | null, string | null, string | null>;
  evidence_due_at: Timestamp;
  decide_at: Timestamp | null;
  created_at: Timestamp;
  decided_at: Timestamp | null;
  updated_at: Timestamp;
}

export interface PaymentsDisputeEvidenceTable {
  id: Identity;
  dispute_id: number;
  field: string;
  filename: string;
  content_type: string;
  bytes: number;
  sha256: string;
  content_enc: string;
  created_at: Timestamp;
}

export interface CardNetworkChallengesTable {
  id: string;
  reference: string;
  decided_by: 'acs' | 'issuer';
  status: 'pending' | 'approved' | 'failed';
  merchant: string;
  currency: string;
  amount: Numeric;
  last4: string;
  /** Only on challenges made before return URLs were encrypted (always null now) */
  return_url: string | null;
  return_url_enc: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  decided_at: Timestamp | null;
}

export interface CardNetworkScriptedOutcomesTable {
  id: Generated<string>;
  pan_fingerprint: string;
  outcome: string;
  created_at: Timestamp;
}

export interface CardNetworkTables {
  card_network_authorizations: CardNetworkAuthorizationsTable;
  card_network_challenges: CardNetworkChallengesTable;
  card_network_scripted_outcomes: CardNetworkScriptedOutcomesTable;
}

/** The whole database; each API adds its tables here as it lands. */
export interface ConsoleTables {
  console_users: ConsoleUsersTable;
  audit_events: AuditEventsTable;
  console_sessions: ConsoleSessionsTable;
  approval_policies: ApprovalPoliciesTable;
  approval_thresholds: ApprovalThresholdsTable;
  approval_requests: ApprovalRequestsTable;
}

export interface ApprovalPoliciesTable {
  tenant_kind: 'merchant' | 'store';
  tenant_id: string;
  bank_account_change: boolean;
  expires_after_seconds: number;
  updated_at: Timestamp;
}

export interface ApprovalThresholdsTable {
  tenant_kind: 'merchant' | 'store';
  tenant_id: string;
  action: 'refund' | 'payout';
  currency: string;
  above: Numeric;
}

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired';

export interface ApprovalRequestsTable {
  id: string;
  tenant_kind: 'merchant' | 'store';
  tenant_id: string;
  action: 'refund' | 'payout' | 'bankAccountChange' | 'riskReview';
  object_id: string;
  currency: string | null;
  amount: ColumnType<string | null, string | bigint | null, string | bigint | null>;
  summary: string;
  payload_enc: string;
  requested_by: string;
  requested_by_email: string;
  status: ApprovalStatus;
  decided_by: string | null;
  decided_by_email: string | null;
  decided_at: Timestamp | null;
  outcome: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface AuditEventsTable {
  seq: Numeric;
  at: Timestamp;
  actor_kind: string;
  actor: string;
  source: string | null;
  action: string;
  object_id: string | null;
  tenant_kind: string | null;
  tenant_id: string | null;
  detail: ColumnType<Record<string, unknown>, string, string>;
  outcome: 'succeeded' | 'refused' | 'failed';
  status: number | null;
  request_id: string | null;
  prev_hash: string;
  hash: string;
}

export type ConsoleRole =
  | 'operator'
  | 'operator-viewer'
  | 'compliance'
  | 'viewer'
  | 'developer'
  | 'finance'
  | 'admin';

export interface ConsoleUsersTable {
  id: string;
  email: string;
  password_hash: string;
  role: 'operator' | 'member';
  /** What the person may do (migration 0040) */
  access: ConsoleRole;
  tenant_kind: 'partner' | 'merchant' | 'store' | null;
  tenant_id: string | null;
  totp_secret_enc: string | null;
  totp_last_step: ColumnType<string | null, string | number | null | undefined, string | number | null>;
  failed_signins: Generated<number>;
  locked_until: Timestamp | null;
  created_at: Timestamp;
}

export interface ConsoleSessionsTable {
  id_hash: string;
  user_id: string | null;
  csrf_token: string;
  stage: 'totp' | 'active';
  created_at: Timestamp;
  expires_at: Timestamp;
}

export type Database = PlatformTables &
  ConsoleTables &
  IssuingTables &
  RailTables &
  CardNetworkTables &
  CryptoTables &
  PaymentsTables & { sandbox_messages: SandboxMessagesTable; outbound_mail: OutboundMailTable };
