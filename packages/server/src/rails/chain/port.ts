// The blockchain rail: deposit addresses, incoming transfers seen and then confirmed, and payouts.
// Each transfer carries the reference it was made for ("crypto-order:<id>", "crypto-refund:<id>", …);
// the rail hands its news to the sink registered for the reference's prefix, inside the transaction
// that records it on the rail side.
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
  status: 'pending' | 'confirmed';
  confirmationsRequired: number;
  broadcastAt: Date;
  confirmsAt: Date;
  confirmedAt: Date | null;
}

export interface ChainNews {
  kind: 'seen' | 'confirmed';
  transfer: ChainTransfer;
}

export type ChainSink = (tx: Tx, news: ChainNews) => Promise<void>;

export interface ChainRail {
  /** The deposit address for this reference on this network and asset (the same one when asked again) */
  depositAddress(db: Executor, input: { network: string; asset: string; reference: string }): Promise<string>;
  /** Broadcasts a payout; its confirmation arrives later through the sink */
  send(
    tx: Tx,
    input: { network: string; asset: string; address: string; amount: bigint; reference: string },
  ): Promise<ChainTransfer>;
  /** Confirmations a transfer has at this instant (capped at what it needs) */
  confirmations(
    transfer: Pick<ChainTransfer, 'broadcastAt' | 'confirmationsRequired' | 'network' | 'asset'>,
    at: Date,
  ): number;
  /** Whether an address is well formed for the network */
  isValidAddress(network: string, address: string): boolean;
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
