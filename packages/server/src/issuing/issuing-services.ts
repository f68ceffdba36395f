// Builds the card issuing API's services on the platform and its rails, and registers its sweeps.

import type { Clock } from '../platform/clock/clock.ts';
import type { Sweeps } from '../platform/clock/sweeps.ts';
import type { Compliance } from '../platform/compliance/compliance.ts';
import type { CapabilityTokens } from '../platform/crypto/capability-tokens.ts';
import { derive, type Encryptor } from '../platform/crypto/encryption.ts';
import type { Db } from '../platform/db/database.ts';
import type { Transact } from '../platform/db/transact.ts';
import type { Outbox } from '../platform/events/outbox.ts';
import type { Ledger } from '../platform/ledger/ledger.ts';
import type { DisputeLabels } from '../platform/risk/backtest.ts';
import type { DecisionPointName } from '../platform/risk/decision-points.ts';
import type { RiskEngine } from '../platform/risk/risk-engine.ts';
import type { CardNetwork } from '../rails/card-network/port.ts';
import type { ChainRail } from '../rails/chain/port.ts';
import type { FxRates } from '../rails/fx/port.ts';
import type { KycVendor } from '../rails/kyc-vendor/port.ts';
import type { Notifier } from '../rails/notifier/port.ts';
import type { WalletTokenization } from '../rails/wallet-tokenization/port.ts';
import type { WalletVerifier } from '../rails/wallet-verifier/port.ts';
import { AccountsService } from './accounts/accounts-service.ts';
import { AuthService } from './auth/auth-service.ts';
import { TokenSigner } from './auth/tokens.ts';
import { CardMonitoring } from './cards/card-monitoring.ts';
import { cardholderVolumeSweep } from './cards/cardholder-volume.ts';
import { CardsService } from './cards/cards-service.ts';
import { SpendingControlsService } from './cards/spending-controls-service.ts';
import { IssuingDisputesService } from './disputes/disputes-service.ts';
import { KycService } from './kyc/kyc-service.ts';
import { CARD_TOPUP_OWNER, CardTopups } from './topups/card-topups.ts';
import { CRYPTO_TOPUP_REFERENCE, CryptoTopups } from './topups/crypto-topups.ts';
import { rapidMovementSweep } from './topups/rapid-movement.ts';
import type { TopupLimits } from './topups/topup-limits.ts';
import { TopupMonitoring } from './topups/topup-monitoring.ts';
import { TopupsService } from './topups/topups-service.ts';
import { AuthorizationRisk, issuingDisputeLabels } from './transactions/authorization-risk.ts';
import { IssuingOnUsIssuer } from './transactions/on-us-issuer.ts';
import { TransactionsService } from './transactions/transactions-service.ts';

/** What the issuing API reads of the configuration (config.ts's Config has it all) */
export interface IssuingSettings {
  publicUrl: string;
  issuingBin: string;
  threeDsTimeoutSeconds: number;
  authorizationHoldSeconds: number;
  issuingClearingTolerancePercent: number;
  issuingDisputeProvisionalCredit: boolean;
  /** Per currency, in major units */
  topupLimits: Record<string, TopupLimits>;
}

export interface IssuingPlatform {
  config: IssuingSettings;
  /** Common authorizations are written in one statement (default: true) */
  oneStatementWrites?: boolean;
  db: Db;
  clock: Clock;
  transact: Transact;
  outbox: Outbox;
  ledger: Ledger;
  sweeps: Sweeps;
  encryptor: Encryptor;
  encryptionKey: Buffer;
  capabilities: CapabilityTokens;
  risk: { engine: RiskEngine; labels: Map<DecisionPointName, DisputeLabels> };
  /** Cardholders screened at KYC, and held by a compliance case (docs/compliance.md) */
  compliance: Pick<Compliance, 'holds' | 'screening' | 'cases' | 'aml'>;
  rails: {
    notifier: Notifier;
    wallets: WalletVerifier;
    kycVendor: KycVendor;
    tokenization: WalletTokenization;
    cardNetwork: CardNetwork;
    chain: ChainRail;
    fx: FxRates;
  };
}

export interface IssuingServices {
  auth: AuthService;
  kyc: KycService;
  accounts: AccountsService;
  cards: CardsService;
  spendingControls: SpendingControlsService;
  transactions: TransactionsService;
  disputes: IssuingDisputesService;
  topups: TopupsService;
  cardTopups: CardTopups;
  cryptoTopups: CryptoTopups;
}

export function createIssuingServices(p: IssuingPlatform): IssuingServices {
  const { config, db, clock, transact, outbox, ledger } = p;
  const auth = new AuthService({
    db,
    transact,
    clock,
    tokens: new TokenSigner(derive(p.encryptionKey, 'tessera/issuing-tokens/v1'), clock),
    notifier: p.rails.notifier,
    wallets: p.rails.wallets,
    codeKey: derive(p.encryptionKey, 'tessera/issuing-codes/v1'),
    publicUrl: config.publicUrl,
  });
  const kyc = new KycService({
    db,
    transact,
    clock,
    outbox,
    vendor: p.rails.kycVendor,
    notifier: p.rails.notifier,
    screening: p.compliance.screening,
  });
  p.rails.kycVendor.connect((tx, result) => kyc.applyVendorResult(tx, result));
  const cards = new CardsService({
    db,
    transact,
    clock,
    outbox,
    encryptor: p.encryptor,
    fingerprintKey: derive(p.encryptionKey, 'tessera/card-fingerprint/v1'),
    bin: config.issuingBin,
    kyc,
    tokenization: p.rails.tokenization,
    holds: p.compliance.holds,
    monitoring: new CardMonitoring({
      clock,
      cases: p.compliance.cases,
      manyCards: p.compliance.aml.manyCards,
    }),
  });
  // A backtest's labels at issuing.authorization are the partner's cardholder disputes.
  p.risk.labels.set('issuing.authorization', issuingDisputeLabels);
  const transactions = new TransactionsService({
    db,
    transact,
    clock,
    outbox,
    ledger,
    threeDsTimeoutSeconds: config.threeDsTimeoutSeconds,
    holdSeconds: config.authorizationHoldSeconds,
    clearingTolerancePercent: config.issuingClearingTolerancePercent,
    network: p.rails.cardNetwork,
    risk: new AuthorizationRisk(p.risk.engine),
    oneStatementWrites: p.oneStatementWrites ?? true,
  });
  p.rails.cardNetwork.connectIssuer(new IssuingOnUsIssuer(config.issuingBin, cards, transactions));
  const topups = new TopupsService({
    db,
    transact,
    clock,
    outbox,
    ledger,
    publicUrl: config.publicUrl,
    limits: config.topupLimits,
    capabilities: p.capabilities,
    risk: p.risk.engine,
    monitoring: new TopupMonitoring({
      clock,
      cases: p.compliance.cases,
      structuring: p.compliance.aml.structuring,
    }),
  });
  const cardTopups = new CardTopups({
    transact,
    clock,
    network: p.rails.cardNetwork,
    topups,
    publicUrl: config.publicUrl,
  });
  p.rails.cardNetwork.connect(CARD_TOPUP_OWNER, (tx, news) => cardTopups.onNetwork(tx, news));
  const cryptoTopups = new CryptoTopups({
    db,
    transact,
    clock,
    chain: p.rails.chain,
    fx: p.rails.fx,
    topups,
  });
  p.rails.chain.connect(CRYPTO_TOPUP_REFERENCE, (tx, news) => cryptoTopups.onChain(tx, news));
  // Time-based issuing work: unanswered 3D Secure challenges time out, uncleared holds lapse, unpaid
  // topups expire, crypto deposits under way report each new confirmation.
  p.sweeps.register('issuing-3ds-challenges', () => transactions.expireChallenges());
  p.sweeps.register('issuing-authorization-holds', () => transactions.expireHolds());
  const disputes = new IssuingDisputesService({
    db,
    transact,
    clock,
    outbox,
    ledger,
    transactions,
    provisionalCredit: config.issuingDisputeProvisionalCredit,
  });
  p.sweeps.register('issuing-dispute-decisions', () => disputes.decideDue());
  p.sweeps.register('issuing-topups', () => topups.expireDue());
  p.sweeps.register(
    'aml-rapid-movement',
    rapidMovementSweep({ db, clock, cases: p.compliance.cases, settings: p.compliance.aml.rapidMovement }),
  );
  p.sweeps.register(
    'aml-cardholder-volume',
    cardholderVolumeSweep({ db, clock, cases: p.compliance.cases, settings: p.compliance.aml.unusualVolume }),
  );
  p.sweeps.register('issuing-crypto-topups', () => cryptoTopups.reportConfirmations());
  return {
    auth,
    kyc,
    accounts: new AccountsService({ db, transact, clock, ledger, kyc, cards }),
    cards,
    spendingControls: new SpendingControlsService({ db, transact, store: transactions.controls }),
    transactions,
    disputes,
    topups,
    cardTopups,
    cryptoTopups,
  };
}
