// The blockchain rail's simulator: addresses of each network's shape, transfers that the sandbox makes
// (POST /sandbox/crypto/orders/{id}/pay) or that payouts broadcast, and confirmations that accrue one
// block time at a time on the injected clock (a sweep hands over those that are final).
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../platform/clock/clock.ts';
import { addSeconds } from '../../platform/clock/clock.ts';
import type { Db, Executor, Tx } from '../../platform/db/database.ts';
import type { ChainTransfersTable } from '../../platform/db/schema.ts';
import { type Transact, transactEach } from '../../platform/db/transact.ts';
import { DomainError, invalidState } from '../../platform/errors/domain-error.ts';
import { findNetwork, type Network } from '../../platform/money/assets.ts';
import { ChainSinks } from './chain-sinks.ts';
import {
  type ChainRail,
  type ChainSink,
  type ChainTransfer,
  isWellFormedAddress,
  type TransferProgress,
} from './port.ts';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BECH32 = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function randomFrom(alphabet: string, length: number): string {
  return [...randomBytes(length)].map((b) => alphabet.charAt(b % alphabet.length)).join('');
}

/** A fresh address of the network's shape (testnet forms: the sandbox never touches a real chain). */
export function simulatedAddress(network: string): string {
  switch (network) {
    case 'BTC':
      return `tb1q${randomFrom(BECH32, 38)}`;
    case 'SOL':
      return randomFrom(BASE58, 44);
    case 'TRON':
      return `T${randomFrom(BASE58, 33)}`;
    default:
      return `0x${randomBytes(20).toString('hex')}`;
  }
}

const transactionHash = (network: string) =>
  network === 'BTC' || network === 'TRON'
    ? randomBytes(32).toString('hex')
    : `0x${randomBytes(32).toString('hex')}`;

export class ChainSimulator implements ChainRail {
  private readonly sinks = new ChainSinks();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly transact: Transact,
  ) {}

  connect(prefix: string, sink: ChainSink): void {
    this.sinks.connect(prefix, sink);
  }

  isRealChain(): boolean {
    return false;
  }

  isValidAddress(network: string, address: string): boolean {
    return isWellFormedAddress(network, address);
  }

  async depositAddress(
    db: Executor,
    input: { network: string; asset: string; reference: string },
  ): Promise<string> {
    const existing = await db
      .selectFrom('chain_addresses')
      .select('address')
      .where('reference', '=', input.reference)
      .where('network', '=', input.network)
      .where('asset', '=', input.asset)
      .executeTakeFirst();
    if (existing) return existing.address;
    const address = simulatedAddress(input.network);
    const { network, asset, reference } = input;
    await db
      .insertInto('chain_addresses')
      .values({ address, network, asset, reference, created_at: this.clock.now() })
      .execute();
    return address;
  }

  async confirmations(_db: Executor, transfers: readonly TransferProgress[], at: Date): Promise<number[]> {
    return transfers.map((transfer) => {
      const network = findNetwork(transfer.asset, transfer.network);
      const blockTime = network ? simulatedBlockSeconds(network) : 1;
      const blocks = Math.floor((at.getTime() - transfer.broadcastAt.getTime()) / 1000 / blockTime);
      return Math.max(0, Math.min(transfer.confirmationsRequired, blocks));
    });
  }

  /**
   * Sandbox: someone sends `amount` to a deposit address this rail handed out, from `sender` (a fresh
   * address of the network's shape when not given, as a buyer's wallet would be).
   */
  async pay(
    tx: Tx,
    input: { address: string; amount: bigint; offramp?: boolean; sender?: string },
  ): Promise<ChainTransfer> {
    const owner = await tx
      .selectFrom('chain_addresses')
      .selectAll()
      .where('address', '=', input.address)
      .executeTakeFirst();
    if (!owner) throw new DomainError('not_found', 'no such deposit address');
    return this.broadcast(tx, {
      network: owner.network,
      asset: owner.asset,
      direction: 'in',
      address: owner.address,
      amount: input.amount,
      offramp: input.offramp ?? false,
      reference: owner.reference,
      sender: input.sender ?? simulatedAddress(owner.network),
    });
  }

  /** Sandbox: a reorg takes an unconfirmed incoming transfer off the chain, and may put it back. */
  async reorg(tx: Tx, input: { transactionHash: string; reinclude: boolean }): Promise<ChainTransfer> {
    const row = await tx
      .selectFrom('chain_transfers')
      .selectAll()
      .where('id', '=', input.transactionHash)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw new DomainError('not_found', 'no such transfer');
    if (row.direction !== 'in' || row.status !== 'pending')
      throw invalidState(
        row.direction !== 'in'
          ? 'only a transfer to a deposit address can be reorged here'
          : `the transfer is ${row.status}: a confirmed transfer is final`,
        { status: row.status },
      );
    const reverted = await tx
      .updateTable('chain_transfers')
      .set({ status: 'reverted' })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await this.sinks.tell(tx, { kind: 'reverted', transfer: toTransfer(reverted) });
    if (!input.reinclude) return toTransfer(reverted);
    const now = this.clock.now();
    const network = findNetwork(row.asset, row.network);
    const blockSeconds = network ? simulatedBlockSeconds(network) : 1;
    const included = await tx
      .updateTable('chain_transfers')
      .set({
        status: 'pending',
        broadcast_at: now,
        confirms_at: addSeconds(now, row.confirmations_required * blockSeconds),
      })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const transfer = toTransfer(included);
    await this.sinks.tell(tx, { kind: 'seen', transfer });
    return transfer;
  }

  async send(
    tx: Tx,
    input: { network: string; asset: string; address: string; amount: bigint; reference: string },
  ): Promise<{ transactionHash: string }> {
    if (!this.isValidAddress(input.network, input.address))
      throw new DomainError('validation_failed', `not a ${input.network} address`, { field: 'address' });
    const transfer = await this.broadcast(tx, { ...input, direction: 'out', offramp: false, sender: null });
    return { transactionHash: transfer.id };
  }

  /** Sweep: transfers whose last needed block has passed are final; their owners hear of it. */
  async confirmDue(): Promise<number> {
    const due = await this.db
      .selectFrom('chain_transfers')
      .select('id')
      .where('status', '=', 'pending')
      .where('confirms_at', '<=', this.clock.now())
      .orderBy('seq')
      .limit(200)
      .execute();
    return transactEach(this.transact, due, async (tx, row) => {
      const updated = await tx
        .updateTable('chain_transfers')
        .set({ status: 'confirmed', confirmed_at: this.clock.now() })
        .where('id', '=', row.id)
        .where('status', '=', 'pending')
        .returningAll()
        .executeTakeFirst();
      if (!updated) return false;
      await this.sinks.tell(tx, { kind: 'confirmed', transfer: toTransfer(updated) });
      return true;
    });
  }

  private async broadcast(
    tx: Tx,
    input: Omit<
      ChainTransfer,
      'id' | 'status' | 'confirmationsRequired' | 'broadcastAt' | 'confirmsAt' | 'confirmedAt'
    >,
  ): Promise<ChainTransfer> {
    const network = findNetwork(input.asset, input.network);
    if (!network) throw new Error(`${input.asset} does not run on ${input.network}`);
    const now = this.clock.now();
    const row = await tx
      .insertInto('chain_transfers')
      .values({
        id: transactionHash(input.network),
        network: input.network,
        asset: input.asset,
        direction: input.direction,
        address: input.address,
        amount: input.amount,
        offramp: input.offramp,
        reference: input.reference,
        sender: input.sender,
        status: 'pending',
        confirmations_required: network.confirmationsRequired,
        broadcast_at: now,
        confirms_at: addSeconds(now, network.confirmationsRequired * simulatedBlockSeconds(network)),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const transfer = toTransfer(row);
    await this.sinks.tell(tx, { kind: 'seen', transfer });
    return transfer;
  }
}

function toTransfer(row: Selectable<ChainTransfersTable>): ChainTransfer {
  return {
    id: row.id,
    network: row.network,
    asset: row.asset,
    direction: row.direction,
    address: row.address,
    amount: BigInt(row.amount),
    offramp: row.offramp,
    reference: row.reference,
    sender: row.sender,
    status: row.status,
    confirmationsRequired: row.confirmations_required,
    broadcastAt: row.broadcast_at,
    confirmsAt: row.confirms_at,
    confirmedAt: row.confirmed_at,
  };
}

/** Every simulated network is final within this time, well inside a crypto order's 15 minutes. */
export const SIMULATED_FINALITY_SECONDS = 300;

/**
 * The simulator's block time: the network's own, shortened where its finality would outlast an order
 * (Bitcoin's 3 blocks of 10 minutes become 3 of 100 seconds), so a sandbox payment completes in time.
 */
export function simulatedBlockSeconds(
  network: Pick<Network, 'blockTimeSeconds' | 'confirmationsRequired'>,
): number {
  return Math.max(
    1,
    Math.min(
      network.blockTimeSeconds,
      Math.floor(SIMULATED_FINALITY_SECONDS / network.confirmationsRequired),
    ),
  );
}
