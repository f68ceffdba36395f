// The block scanner: walks the chain block by block from where it stopped (evm_scan_state), finds what
// deposit addresses receive — native transfers among the block's transactions, ERC-20 Transfer logs of
// the configured tokens — and the hot wallet's payouts being mined, counts confirmations by blocks, and
// follows reorgs: each block's parent must be the block processed before it; when it is not (or the
// tip's hash changed), the scanner walks back to the fork, un-includes what the replaced blocks held
// (`reverted` news) and scans the new branch, which includes it again (`seen`) if it is there.
//
// A node is checked, not trusted: the wrong chain id, a head far behind what was processed, a block
// missing below the head, or a fork deeper than the history kept stop the scanner with the reason
// recorded (readiness reports it) rather than skipping blocks.
import { type Selectable, sql } from 'kysely';
import type { Executor, Tx } from '../../../platform/db/database.ts';
import type { EvmScanStateTable, EvmTransfersTable } from '../../../platform/db/schema.ts';
import { depositReceipts, type Receipt } from './deposit-receipts.ts';
import { type EvmContext, toChainTransfer, wrongChain } from './evm-context.ts';
import { errorText, type NodeBlock, senderOf } from './evm-node.ts';

/** Blocks remembered for finding a fork; a deeper reorg stops the scanner */
const KEPT_BLOCKS = 128n;
/** Blocks processed per sweep, so one sweep never runs for long (the next continues) */
const BLOCKS_PER_SWEEP = 100;
/** Forks followed per sweep before the rest is left to the next */
const REWINDS_PER_SWEEP = 4;

export class BlockScanner {
  private lastProblem: string | undefined;
  /** The node's head at the last scan (for the scanner's lag behind it, a metric) */
  head: bigint | undefined;
  private readonly sender: string | undefined;

  constructor(private readonly c: EvmContext) {
    this.sender = c.config.refundPrivateKey ? senderOf(c.config.refundPrivateKey).toLowerCase() : undefined;
  }

  /** Processes new blocks; undefined when the scanner is stopped (the reason is recorded). */
  async scan(): Promise<number | undefined> {
    const { node, config } = this.c;
    let state = await this.state();
    let chainId: number;
    let head: bigint;
    try {
      chainId = await node.chainId();
      head = await node.head();
      this.head = head;
    } catch (err) {
      return this.stop(`the ${config.network} node does not answer (${errorText(err)})`);
    }
    const expected = config.chainId ?? (state ? Number(state.chain_id) : chainId);
    if (chainId !== expected) return this.stop(wrongChain(config.network, chainId, expected));
    try {
      if (!state) {
        await this.c.transact((tx) => this.recordStart(tx));
        return 0;
      }
      let processed = 0;
      // The last block processed is checked against the chain once per sweep (a reorg at the tip
      // changes no height); after that each new block's parent hash links it to the one before.
      let tipChecked = false;
      for (let rewinds = 0; processed < BLOCKS_PER_SWEEP; ) {
        const cursor = BigInt(state.block_number);
        if (head < cursor - KEPT_BLOCKS)
          return this.stop(
            `the node's head ${head} is behind block ${cursor}, already processed (a lagging node?)`,
          );
        if (!tipChecked) {
          const tip = await node.block(cursor);
          if (!tip) return this.stop(`the node has no block ${cursor}, already processed (a lagging node?)`);
          if (tip.hash !== state.block_hash) {
            if (rewinds++ >= REWINDS_PER_SWEEP) break;
            const rewound = await this.rewind(cursor);
            if (rewound === undefined) return undefined;
            state = rewound;
            continue;
          }
          tipChecked = true;
        }
        const next = cursor + 1n;
        if (next > head) break;
        const block = await node.block(next);
        if (!block) return this.stop(`the node reports head ${head} but has no block ${next} (a gap)`);
        if (block.parentHash !== state.block_hash) {
          // The chain changed under the scan: walk back from the last block processed.
          if (rewinds++ >= REWINDS_PER_SWEEP) break;
          const rewound = await this.rewind(cursor);
          if (rewound === undefined) return undefined;
          state = rewound;
          tipChecked = false;
          continue;
        }
        state = await this.include(state, block);
        processed++;
      }
      await this.healthy();
      return processed;
    } catch (err) {
      return this.stop(`the ${config.network} node failed a request (${errorText(err)})`);
    }
  }

  private state(): Promise<Selectable<EvmScanStateTable> | undefined> {
    return this.c.db
      .selectFrom('evm_scan_state')
      .selectAll()
      .where('network', '=', this.c.config.network)
      .executeTakeFirst();
  }

  /**
   * Where the scan starts, recorded once per network before any deposit address can be handed out: at
   * boot, else in the transaction that hands out the first address (evm-chain.ts). Every block after it
   * is scanned, so a payment mined before the scanner's first sweep is still found. Answers whether it
   * recorded the start now. Throws when the node does not answer or serves another chain: no address
   * may be handed out that the scan might not cover.
   */
  async recordStart(db: Executor): Promise<boolean> {
    const { node, config } = this.c;
    const known = await db
      .selectFrom('evm_scan_state')
      .select('network')
      .where('network', '=', config.network)
      .executeTakeFirst();
    if (known) return false;
    const chainId = await node.chainId();
    if (config.chainId !== undefined && chainId !== config.chainId)
      throw new Error(wrongChain(config.network, chainId, config.chainId));
    const head = await node.head();
    const block = await node.block(head);
    if (!block) throw new Error(`no block at the head ${head}`);
    const inserted = await db
      .insertInto('evm_scan_state')
      .values({
        network: config.network,
        chain_id: BigInt(chainId),
        block_number: block.number,
        block_hash: block.hash,
        checked_at: this.c.clock.now(),
      })
      .onConflict((oc) => oc.column('network').doNothing())
      .returning('network')
      .executeTakeFirst();
    if (!inserted) return false;
    await this.remember(db, block);
    this.c.logger.info({ network: config.network, chainId, block: String(head) }, 'EVM scanner starts');
    return true;
  }

  /**
   * The block at `from` was replaced: walk back to the last block whose hash the node still has, and
   * un-include everything above it. Answers the new state, or undefined when the fork is too deep.
   */
  private async rewind(from: bigint): Promise<Selectable<EvmScanStateTable> | undefined> {
    const { db, node, config, logger } = this.c;
    let ancestor: { number: bigint; hash: string } | undefined;
    for (let k = from - 1n; k >= from - KEPT_BLOCKS && k >= 0n; k--) {
      const kept = await db
        .selectFrom('evm_blocks')
        .select('hash')
        .where('network', '=', config.network)
        .where('number', '=', k.toString())
        .executeTakeFirst();
      if (!kept) break;
      if ((await node.block(k))?.hash === kept.hash) {
        ancestor = { number: k, hash: kept.hash };
        break;
      }
    }
    if (!ancestor)
      return this.stop(
        `a reorg replaced block ${from} and more than the ${KEPT_BLOCKS} blocks kept before it`,
      );
    const fork = ancestor;
    await this.c.transact(async (tx) => {
      const moved = await tx
        .selectFrom('evm_transfers')
        .selectAll()
        .where('network', '=', config.network)
        .where('block_number', '>', fork.number.toString())
        .where('status', 'in', ['pending', 'confirmed', 'failed'])
        .forUpdate()
        .execute();
      for (const row of moved) {
        if (row.status === 'confirmed') {
          // Final by the operator's confirmation count, yet replaced: kept as final, and said loudly.
          logger.error(
            { network: config.network, transfer: row.id, block: row.block_number },
            'a reorg replaced the block of a transfer already final; raise TESSERA_EVM_CONFIRMATIONS',
          );
          continue;
        }
        const status = row.direction === 'in' ? 'reverted' : 'broadcast';
        const updated = await tx
          .updateTable('evm_transfers')
          .set({ status, block_number: null, block_hash: null })
          .where('id', '=', row.id)
          .returningAll()
          .executeTakeFirstOrThrow();
        if (row.direction === 'in')
          await this.c.sinks.tell(tx, {
            kind: 'reverted',
            transfer: toChainTransfer(updated, this.c.clock.now()),
          });
      }
      await tx
        .deleteFrom('evm_blocks')
        .where('network', '=', config.network)
        .where('number', '>', fork.number.toString())
        .execute();
      await tx
        .updateTable('evm_scan_state')
        .set({ block_number: fork.number, block_hash: fork.hash })
        .where('network', '=', config.network)
        .execute();
      logger.warn(
        { network: config.network, from: String(from), fork: String(fork.number), transfers: moved.length },
        'EVM reorg: blocks replaced',
      );
    });
    return this.state();
  }

  /** One block: what it brings, the payouts it mines, the confirmations it adds, in one transaction. */
  private async include(
    state: Selectable<EvmScanStateTable>,
    block: NodeBlock,
  ): Promise<Selectable<EvmScanStateTable>> {
    const receipts = await depositReceipts(this.c, block);
    const ours = this.sender ? block.transactions.filter((t) => t.from === this.sender) : [];
    const mined = new Map<string, boolean>();
    for (const t of ours) mined.set(t.hash, (await this.c.node.succeeded(t.hash)) ?? false);
    const { config } = this.c;
    const now = this.c.clock.now();
    await this.c.transact(async (tx) => {
      await this.remember(tx, block);
      for (const [id, receipt] of receipts) await this.received(tx, id, receipt, block);
      if (mined.size > 0) await this.payoutsMined(tx, mined, block);
      await this.confirm(tx, block.number);
      await tx
        .updateTable('evm_scan_state')
        .set({ block_number: block.number, block_hash: block.hash, checked_at: now })
        .where('network', '=', config.network)
        .execute();
    });
    return { ...state, block_number: block.number.toString(), block_hash: block.hash, checked_at: now };
  }

  private async received(tx: Tx, id: string, receipt: Receipt, block: NodeBlock): Promise<void> {
    const now = this.c.clock.now();
    const existing = await tx
      .selectFrom('evm_transfers')
      .selectAll()
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    if (existing && existing.status !== 'reverted') return;
    const at = {
      status: 'pending' as const,
      tx_hash: receipt.txHash,
      block_number: block.number,
      block_hash: block.hash,
    };
    const row = existing
      ? await tx
          .updateTable('evm_transfers')
          .set(at)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirstOrThrow()
      : await tx
          .insertInto('evm_transfers')
          .values({
            id,
            network: this.c.config.network,
            asset: receipt.asset,
            direction: 'in',
            address: receipt.address,
            amount: receipt.amount,
            reference: receipt.reference,
            sender: receipt.from,
            confirmations_required: this.c.config.confirmations,
            created_at: now,
            ...at,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
    await this.c.sinks.tell(tx, { kind: 'seen', transfer: toChainTransfer(row, now) });
  }

  /** The hot wallet's transactions in this block: which payout each one was (any of its signed versions). */
  private async payoutsMined(tx: Tx, mined: Map<string, boolean>, block: NodeBlock): Promise<void> {
    const waiting = await tx
      .selectFrom('evm_transfers')
      .selectAll()
      .where('network', '=', this.c.config.network)
      .where('direction', '=', 'out')
      .where('status', '=', 'broadcast')
      .forUpdate()
      .execute();
    for (const row of waiting) {
      const attempt = row.attempts.find((a) => mined.has(a.hash));
      if (!attempt) continue;
      const ok = mined.get(attempt.hash) === true;
      await tx
        .updateTable('evm_transfers')
        .set({
          status: ok ? 'pending' : 'failed',
          tx_hash: attempt.hash,
          block_number: block.number,
          block_hash: block.hash,
          last_error: ok ? null : 'the transaction was mined but reverted',
        })
        .where('id', '=', row.id)
        .execute();
      if (!ok)
        this.c.logger.error(
          { network: this.c.config.network, payout: row.id, txHash: attempt.hash },
          'a payout was mined but reverted by the EVM (hot wallet short of the token?); it needs the operator',
        );
    }
  }

  /** Transfers with enough blocks on top are final; their owners hear of it. */
  private async confirm(tx: Tx, head: bigint): Promise<void> {
    const due = await tx
      .selectFrom('evm_transfers')
      .selectAll()
      .where('network', '=', this.c.config.network)
      .where('status', '=', 'pending')
      .where(sql<boolean>`block_number + confirmations_required - 1 <= ${head.toString()}`)
      .forUpdate()
      .execute();
    const now = this.c.clock.now();
    for (const row of due) {
      const updated: Selectable<EvmTransfersTable> = { ...row, status: 'confirmed', confirmed_at: now };
      await tx
        .updateTable('evm_transfers')
        .set({ status: 'confirmed', confirmed_at: now })
        .where('id', '=', row.id)
        .execute();
      await this.c.sinks.tell(tx, { kind: 'confirmed', transfer: toChainTransfer(updated, now) });
    }
  }

  private async remember(tx: Executor, block: NodeBlock): Promise<void> {
    const network = this.c.config.network;
    await tx
      .insertInto('evm_blocks')
      .values({ network, number: block.number, hash: block.hash, parent_hash: block.parentHash })
      .onConflict((oc) =>
        oc.columns(['network', 'number']).doUpdateSet({ hash: block.hash, parent_hash: block.parentHash }),
      )
      .execute();
    await tx
      .deleteFrom('evm_blocks')
      .where('network', '=', network)
      .where('number', '<', (block.number - KEPT_BLOCKS).toString())
      .execute();
  }

  /** Records why the scanner stopped (once per change, logged as an error); readiness reports it. */
  private async stop(problem: string): Promise<undefined> {
    if (problem !== this.lastProblem)
      this.c.logger.error({ network: this.c.config.network }, `EVM scanner stopped: ${problem}`);
    this.lastProblem = problem;
    await this.c.db
      .updateTable('evm_scan_state')
      .set({ problem })
      .where('network', '=', this.c.config.network)
      .execute();
    return undefined;
  }

  private async healthy(): Promise<void> {
    if (this.lastProblem) this.c.logger.info({ network: this.c.config.network }, 'EVM scanner running again');
    this.lastProblem = undefined;
    await this.c.db
      .updateTable('evm_scan_state')
      .set({ problem: null, checked_at: this.c.clock.now() })
      .where('network', '=', this.c.config.network)
      .execute();
  }
}
