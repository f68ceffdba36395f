// What the sandbox may do to the rails beyond their ports: pay an address as a buyer's wallet would, pin
// an exchange rate, script a card's answers, make a wallet payment token, read the messages sent, and the
// hosted pages of the simulated 3DS server and KYC vendor. Only the simulators implement these; the
// sandbox API (sandbox mode only) and those pages (wherever the simulator is the rail's adapter) reach
// them through these interfaces, never through a simulator class.
import type { Executor, Tx } from '../platform/db/database.ts';
import type { ChallengeView } from './card-network/network-simulator.ts';
import type { ScriptableOutcome } from './card-network/test-cards.ts';
import type { ChainTransfer } from './chain/port.ts';
import type { FxRates } from './fx/port.ts';
import type {
  SimulatedOutcome,
  SubmittedDocument,
  VendorSession,
} from './kyc-vendor/kyc-vendor-simulator.ts';
import type { KycVendor } from './kyc-vendor/port.ts';
import type { OutboundMessage } from './notifier/port.ts';
import type { WalletPaymentData, WalletType } from './wallet-tokenization/payment-tokens.ts';

export { simulatedAddress } from './chain/chain-simulator.ts';
export { SIMULATED_OUTCOMES } from './kyc-vendor/kyc-vendor-simulator.ts';
export type { ChallengeView, SimulatedOutcome, SubmittedDocument, VendorSession };

export interface ChainSandbox {
  /** A transfer of `amount` (the asset's minor units) to an address, as a buyer's wallet would send it. */
  pay(
    tx: Tx,
    input: { address: string; amount: bigint; offramp?: boolean; sender?: string },
  ): Promise<ChainTransfer>;
  /**
   * A reorg drops the block holding an unconfirmed incoming transfer (`reverted` news); with `reinclude`
   * a new block holds it again at once (`seen` news, its confirmations counted afresh).
   */
  reorg(tx: Tx, input: { transactionHash: string; reinclude: boolean }): Promise<ChainTransfer>;
}

export interface FxSandbox extends FxRates {
  /** Pins a rate (null: back to the simulated feed). */
  pin(db: Executor, from: string, to: string, rateE18: bigint | null): Promise<void>;
}

export interface CardNetworkSandbox {
  /** The next answers the network gives for a card number. */
  script(pan: string, outcomes: ScriptableOutcome[]): Promise<void>;
  /** The hosted ACS page's challenge, by its `creq`. */
  challenge(creq: string): Promise<ChallengeView | undefined>;
  /** The hosted ACS page's decision; answers where to send the browser (none: stay). */
  decideChallenge(creq: string, outcome: 'approved' | 'failed'): Promise<string | null>;
}

export interface KycVendorSandbox extends KycVendor {
  /** The session a hosted page's token was issued for. */
  find(db: Executor, token: string): Promise<VendorSession | undefined>;
  /** What the person submitted on the hosted page; reports the result. */
  submit(
    tx: Executor,
    sessionId: string,
    input: { choice: SimulatedOutcome; document?: SubmittedDocument },
  ): Promise<VendorSession>;
}

export interface TokenizationSandbox {
  /** What the simulated wallet does with the pass data it is handed (proves the encryption). */
  openSealed(ciphertext: string, ephemeralPublicKey: string): string;
}

export interface WalletTokensSandbox {
  /** A wallet payment token as Apple Pay or Google Pay would hand it to a merchant. */
  seal(walletType: WalletType, payment: WalletPaymentData): string;
}

export interface StoredMessage extends OutboundMessage {
  id: string;
  createdAt: Date;
}

export interface MessageInbox {
  /** Newest first. */
  list(db: Executor, filter: { recipient?: string; limit: number }): Promise<StoredMessage[]>;
}

export interface RailSandbox {
  chain: ChainSandbox;
  fx: FxSandbox;
  cardNetwork: CardNetworkSandbox;
  kycVendor: KycVendorSandbox;
  walletTokens: WalletTokensSandbox;
  tokenization: TokenizationSandbox;
  inbox: MessageInbox;
}
