// What the EVM chain's block scanner and payout sender share: their context, how a row of evm_transfers
// is told to a sink, and the words for a node on the wrong chain.
import type { Selectable } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../../../platform/clock/clock.ts';
import type { Db } from '../../../platform/db/database.ts';
import type { EvmTransfersTable } from '../../../platform/db/schema.ts';
import type { Transact } from '../../../platform/db/transact.ts';
import type { ChainSinks } from '../chain-sinks.ts';
import type { ChainTransfer } from '../port.ts';
import type { EvmConfig } from './evm-config.ts';
import type { EvmNode } from './evm-node.ts';

/** What the scanner and the payout sender share. */
export interface EvmContext {
  config: EvmConfig;
  db: Db;
  clock: Clock;
  transact: Transact;
  logger: Logger;
  node: EvmNode;
  sinks: ChainSinks;
}

export function wrongChain(network: string, served: number, expected: number): string {
  return `the ${network} node serves chain id ${served}, expected ${expected} (TESSERA_EVM_CHAIN_ID, or the chain first scanned)`;
}

/** What a sink hears about a row of evm_transfers: a payout is known by the hash last signed or mined. */
export function toChainTransfer(row: Selectable<EvmTransfersTable>, at: Date): ChainTransfer {
  return {
    id: row.direction === 'out' ? (row.tx_hash ?? row.id) : row.id,
    network: row.network,
    asset: row.asset,
    direction: row.direction,
    address: row.address,
    amount: BigInt(row.amount),
    offramp: false,
    reference: row.reference,
    sender: row.sender,
    status: row.status === 'confirmed' ? 'confirmed' : 'pending',
    confirmationsRequired: row.confirmations_required,
    broadcastAt: row.created_at,
    confirmsAt: at,
    confirmedAt: row.confirmed_at,
  };
}
