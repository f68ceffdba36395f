// The rails, chosen at boot by configuration: the one place that names an adapter. Everything above
// rails/ sees the ports (Rails) and, for the sandbox API and the simulators' hosted pages, the sandbox
// controls (RailSandbox). Each adapter's own time-based work is registered here as sweeps.

import type { Logger } from 'pino';
import type { Clock } from '../platform/clock/clock.ts';
import type { Sweeps } from '../platform/clock/sweeps.ts';
import type { CapabilityTokens } from '../platform/crypto/capability-tokens.ts';
import { derive, type Encryptor } from '../platform/crypto/encryption.ts';
import type { Db } from '../platform/db/database.ts';
import type { Transact } from '../platform/db/transact.ts';
import { traced } from '../platform/observability/tracing.ts';
import { CardNetworkSimulator } from './card-network/network-simulator.ts';
import type { CardNetwork } from './card-network/port.ts';
import { ChainRouter } from './chain/chain-router.ts';
import { ChainSimulator } from './chain/chain-simulator.ts';
import type { EvmConfig } from './chain/evm/evm-config.ts';
import type { ChainRail } from './chain/port.ts';
import { FxSimulator } from './fx/fx-simulator.ts';
import type { FxRates } from './fx/port.ts';
import { KycVendorSimulator } from './kyc-vendor/kyc-vendor-simulator.ts';
import type { KycVendor } from './kyc-vendor/port.ts';
import { chooseNotifier } from './notifier/choose-notifier.ts';
import type { Notifier } from './notifier/port.ts';
import { SandboxNotifier } from './notifier/sandbox-notifier.ts';
import { SmtpNotifier } from './notifier/smtp-notifier.ts';
import type { RailSandbox } from './sandbox.ts';
import {
  WalletPaymentTokenSimulator,
  type WalletPaymentTokens,
} from './wallet-tokenization/payment-tokens.ts';
import type { WalletTokenization } from './wallet-tokenization/port.ts';
import { TokenizationSimulator } from './wallet-tokenization/tokenization-simulator.ts';
import type { WalletVerifier } from './wallet-verifier/port.ts';
import { SignatureWalletVerifier } from './wallet-verifier/signature-verifier.ts';

/** The ports the APIs use. */
export interface Rails {
  notifier: Notifier;
  wallets: WalletVerifier;
  kycVendor: KycVendor;
  tokenization: WalletTokenization;
  chain: ChainRail;
  fx: FxRates;
  cardNetwork: CardNetwork;
  walletTokens: WalletPaymentTokens;
}

/** What the rails read of the configuration (config.ts's Config has it all) */
export interface RailsSettings {
  mode: 'sandbox' | 'production';
  publicUrl: string;
  retention: { outboundMailDays: number };
  /** Mail by SMTP, when configured */
  smtp: { url: string; from: string } | undefined;
  /** A real EVM chain, when configured */
  evm: EvmConfig | undefined;
}

export interface RailsDeps {
  config: RailsSettings;
  db: Db;
  clock: Clock;
  transact: Transact;
  encryptor: Encryptor;
  encryptionKey: Buffer;
  capabilities: CapabilityTokens;
  logger: Logger;
  sweeps: Sweeps;
  /** Where the card network simulator hears of scripted outcomes from other processes */
  processes: { on(channel: string, handler: (payload: string) => unknown): void };
}

export interface BuiltRails {
  rails: Rails;
  sandbox: RailSandbox;
  /** Why a real rail cannot work now (GET /readyz), each undefined when it can */
  readiness: (() => Promise<string | undefined>)[];
  /** Each real chain's head as its scanner last saw it (the scanner's lag is measured against it) */
  chainHeads(): { network: string; head: bigint }[];
  /** Ends what the adapters hold open (the SMTP connection). */
  close(): void;
}

/**
 * Builds the adapters. Mail goes by SMTP and an EVM network to a real chain when configured; every other
 * rail runs its simulator in every mode for now (README, Production); the wallet verifier is real
 * cryptography.
 */
export async function createRails(deps: RailsDeps): Promise<BuiltRails> {
  const { config, db, clock, transact, encryptor, encryptionKey, capabilities, logger, sweeps } = deps;

  const inbox = new SandboxNotifier(clock, encryptor);
  const smtp =
    config.smtp &&
    new SmtpNotifier({
      ...config.smtp,
      db,
      clock,
      encryptor,
      logger,
      retentionDays: config.retention.outboundMailDays,
    });
  if (smtp) {
    // Checked in the background: an unreachable mail server must not hold the start (up to its timeouts).
    void smtp.verify();
    sweeps.register('outbound-mail', () => smtp.deliverDue(), { nextDue: () => smtp.nextDue() });
    sweeps.register('outbound-mail-retention', () => smtp.purgeOld());
  } else if (config.mode === 'production') {
    logger.warn('TESSERA_SMTP_URL is not set: mail to people is kept, not sent');
  }

  const simulatedChain = new ChainSimulator(db, clock, transact);
  // The EVM adapter is loaded only where one is configured: its client library (viem) is most of a
  // start's module loading, and the sandbox, every test and most operators never use it.
  const evm =
    config.evm &&
    new (await import('./chain/evm/evm-chain.ts')).EvmChain({
      config: config.evm,
      db,
      clock,
      transact,
      logger,
    });
  const chain = new ChainRouter(simulatedChain, evm);
  const fx = new FxSimulator(clock);
  const kycVendor = new KycVendorSimulator(clock, config.publicUrl, capabilities);
  const cardNetwork = new CardNetworkSimulator({
    db,
    clock,
    transact,
    publicUrl: config.publicUrl,
    fingerprintKey: derive(encryptionKey, 'tessera/card-network-fingerprint/v1'),
    encryptor,
    capabilities,
  });
  const tokenization = new TokenizationSimulator(derive(encryptionKey, 'tessera/wallet-activation/v1'));
  const walletTokens = new WalletPaymentTokenSimulator(
    derive(encryptionKey, 'tessera/wallet-payment-token/v1'),
  );

  // Chain confirmations run before the domain sweeps (registered after this), so a transfer final at an
  // order's deadline counts.
  sweeps.register('chain-confirmations', () => simulatedChain.confirmDue());
  if (evm) {
    // Said at start when the node is down or on the wrong chain; the sweep then scans and pays out.
    void evm.checkAtStart();
    sweeps.register('evm-chain', () => evm.sweep());
  }
  // The card network's own time-based work: unanswered ACS challenges fail, lost answers are reconciled.
  sweeps.register('card-network-challenges', () => cardNetwork.expireChallenges());
  sweeps.register('card-network-scripts', () => cardNetwork.checkScripts());
  sweeps.register('card-network-reconciliation', () => cardNetwork.reconcileDue());
  sweeps.register('card-network-chargebacks', () => cardNetwork.chargebacksDue());
  cardNetwork.watchScripts(deps.processes);

  return {
    // What the platform calls is traced (docs/operations.md, Traces); the sandbox's controls are not.
    rails: {
      notifier: traced('notifier', chooseNotifier(config.mode, inbox, smtp)),
      wallets: traced('wallets', new SignatureWalletVerifier()),
      kycVendor: traced('kyc-vendor', kycVendor),
      tokenization: traced('tokenization', tokenization),
      chain: traced('chain', chain),
      fx: traced('fx', fx),
      cardNetwork: traced('card-network', cardNetwork),
      walletTokens: traced('wallet-tokens', walletTokens),
    },
    sandbox: { chain, fx, cardNetwork, kycVendor, walletTokens, tokenization, inbox },
    readiness: evm ? [() => evm.readiness()] : [],
    chainHeads: () =>
      evm && evm.observedHead !== undefined ? [{ network: evm.network, head: evm.observedHead }] : [],
    close: () => smtp?.close(),
  };
}
