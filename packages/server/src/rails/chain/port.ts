// The blockchain rail: deposit addresses, incoming transfers seen and then confirmed, and payouts.
// Each transfer carries the reference it was made for ("crypto-order:<id>", "crypto-refund:<id>", …);
// the rail hands its news to the sink registered for the reference's prefix, inside the transaction
// that records it on the rail side. On a real chain a block can be replaced (a reorg): a transfer seen
// in it is then `reverted` (no longer on the chain), and `seen` again if a later block includes it.
// A transfer with the confirmations its network requires is final; the rail never reverts it.
import type { Executor, Tx } from '../../platform/db/database.ts';

export interface ChainTransfer {
  id: string;
  network: string;
  asset: string;
  direction: 'in' | 'out';
  address: string;
  /** Minor units of the asset (its ledger exponent) */
  amount: bigint;
  /** Sent by an offramp provider on the buyer's behalf (such payments cannot be refunded) */
  offramp: boolean;
  reference: string;
  /** The address an incoming transfer came from, where the chain says (null for one the platform sent) */
  sender: string | null;
  status: 'pending' | 'confirmed' | 'reverted';
  confirmationsRequired: number;
  broadcastAt: Date;
  confirmsAt: Date;
  confirmedAt: Date | null;
}

export interface ChainNews {
  kind: 'seen' | 'confirmed' | 'reverted';
  transfer: ChainTransfer;
}

export type ChainSink = (tx: Tx, news: ChainNews) => Promise<void>;

/** What a sink knows of a transfer it was told about, to ask how far it has confirmed. */
export interface TransferProgress {
  id: string;
  network: string;
  asset: string;
  broadcastAt: Date;
  confirmationsRequired: number;
}

export interface ChainRail {
  /**
   * The deposit address for this reference on this network and asset (the same one when asked again).
   * `accountKey` is the merchant's own extended public key, where a real chain derives addresses from one.
   */
  depositAddress(
    db: Executor,
    input: { network: string; asset: string; reference: string; accountKey?: string | null },
  ): Promise<string>;
  /**
   * Sends a payout, in the caller's transaction: `seen` news follows once it is on its way (carrying its
   * transaction hash), `confirmed` once final. A simulated chain knows the hash at once; a real one signs
   * and broadcasts after the commit, so its hash may still be unknown here.
   */
  send(
    tx: Tx,
    input: { network: string; asset: string; address: string; amount: bigint; reference: string },
  ): Promise<{ transactionHash: string | null }>;
  /** Confirmations each transfer has at this instant (capped at what it needs), in the order asked */
  confirmations(db: Executor, transfers: readonly TransferProgress[], at: Date): Promise<number[]>;
  /** Whether an address is well formed for the network */
  isValidAddress(network: string, address: string): boolean;
  /** Whether payments on the network arrive on a real chain (not the sandbox's simulator) */
  isRealChain(network: string): boolean;
  /** Where news about references starting with `prefix:` goes */
  connect(prefix: string, sink: ChainSink): void;
}

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';
const ADDRESS_SHAPES: Readonly<Record<string, RegExp>> = {
  BTC: /^(bc1|tb1)[02-9ac-hj-np-z]{11,71}$|^[123mn][1-9A-HJ-NP-Za-km-z]{25,34}$/,
  ETH: /^0x[0-9a-fA-F]{40}$/,
  POLYGON: /^0x[0-9a-fA-F]{40}$/,
  BSC: /^0x[0-9a-fA-F]{40}$/,
  SOL: new RegExp(`^${BASE58}{32,44}$`),
  TRON: new RegExp(`^T${BASE58}{33}$`),
};

export function isWellFormedAddress(network: string, address: string): boolean {
  return ADDRESS_SHAPES[network]?.test(address) ?? false;
}
