// Payouts from the hot wallet (accepted refunds). A queued payout is signed locally with the wallet's
// next nonce, and its hash and raw transaction are committed before anything is sent: a crash after that
// rebroadcasts the same transaction, never a second one. A payout not mined after BUMP_AFTER_SECONDS is
// signed again with the same nonce and higher fees (a replacement: only one of its versions can ever be
// mined); the block scanner recognises whichever is mined, and confirms it like any transfer.
//
// The hot wallet must be Tessera's alone: its nonces are counted in evm_nonces, starting from the node's
// count the first time.
import type { Selectable } from 'kysely';
import type { Hex } from 'viem';
import type { Tx } from '../../../platform/db/database.ts';
import type { EvmPayoutAttempt, EvmTransfersTable } from '../../../platform/db/schema.ts';
import { unitsPerLedgerUnit } from './evm-config.ts';
import { type EvmContext, toChainTransfer } from './evm-context.ts';
import { errorText, type PayoutCall, senderOf, signPayout } from './evm-node.ts';

/** Seconds (on the injected clock) a payout may wait unmined before it is re-signed with higher fees */
export const BUMP_AFTER_SECONDS = 180;
/** A replacement must offer at least 10 % more than what it replaces (geth's and anvil's rule); 12.5 % */
const BUMP_NUMERATOR = 1125n;
const BUMP_DENOMINATOR = 1000n;
const PAYOUTS_PER_SWEEP = 20;

export class PayoutSender {
  private readonly sender: `0x${string}` | undefined;
  /** Payouts this process has (re)broadcast since it started; after a restart each is sent again once */
  private readonly sentHere = new Set<string>();
  private warnedNoKey = false;

  constructor(private readonly c: EvmContext) {
    this.sender = c.config.refundPrivateKey ? senderOf(c.config.refundPrivateKey) : undefined;
  }

  async run(): Promise<number> {
    const open = await this.c.db
      .selectFrom('evm_transfers')
      .selectAll()
      .where('network', '=', this.c.config.network)
      .where('direction', '=', 'out')
      .where('status', 'in', ['queued', 'broadcast'])
      .orderBy('created_at')
      .limit(PAYOUTS_PER_SWEEP)
      .execute();
    if (open.length === 0) return 0;
    const key = this.c.config.refundPrivateKey;
    if (!key || !this.sender) {
      if (!this.warnedNoKey)
        this.c.logger.warn(
          { network: this.c.config.network, waiting: open.length },
          'refund payouts wait: TESSERA_EVM_REFUND_PRIVATE_KEY is not set',
        );
      this.warnedNoKey = true;
      return 0;
    }
    let done = 0;
    for (const row of open) {
      try {
        if (row.status === 'queued') await this.signFirst(key, this.sender, row);
        else if (this.isStuck(row)) await this.bump(key, row);
        else if (!this.sentHere.has(row.id)) await this.send(row.id, row.attempts);
        else continue;
        done++;
      } catch (err) {
        // Left as it is for the next sweep; the reason is kept on the row and logged (never the raw tx).
        const reason = errorText(err);
        await this.c.db
          .updateTable('evm_transfers')
          .set({ last_error: reason })
          .where('id', '=', row.id)
          .execute();
        this.c.logger.warn({ network: this.c.config.network, payout: row.id, reason }, 'payout not sent yet');
      }
    }
    return done;
  }

  /** A new payout: the next nonce, signed, recorded and announced in one transaction, then broadcast. */
  private async signFirst(
    key: Hex,
    sender: `0x${string}`,
    row: Selectable<EvmTransfersTable>,
  ): Promise<void> {
    const { node, config } = this.c;
    const call = this.call(row);
    const [fees, gas, chainId] = await Promise.all([node.fees(), node.gasFor(sender, call), node.chainId()]);
    const nodeNonce = await node.nonce(sender);
    const signed = await this.c.transact(async (tx) => {
      const payout = await lockPayout(tx, row.id, 'queued');
      if (!payout) return undefined;
      await tx
        .insertInto('evm_nonces')
        .values({ network: config.network, sender: sender.toLowerCase(), next_nonce: BigInt(nodeNonce) })
        .onConflict((oc) => oc.columns(['network', 'sender']).doNothing())
        .execute();
      const { next_nonce } = await tx
        .updateTable('evm_nonces')
        .set((eb) => ({ next_nonce: eb('next_nonce', '+', '1') }))
        .where('network', '=', config.network)
        .where('sender', '=', sender.toLowerCase())
        .returning('next_nonce')
        .executeTakeFirstOrThrow();
      const nonce = Number(BigInt(next_nonce) - 1n);
      const attempt = await this.sign(key, { ...call, chainId, nonce, gas, ...fees });
      await this.record(tx, payout, [attempt], BigInt(nonce));
      return attempt;
    });
    if (signed) await this.send(row.id, [signed]);
  }

  /** Not mined for a while: the same nonce again, with fees raised past the replacement rule. */
  private async bump(key: Hex, row: Selectable<EvmTransfersTable>): Promise<void> {
    const previous = latest(row);
    const current = await this.c.node.fees();
    const raise = (old: string, now: bigint) => {
      const bumped = (BigInt(old) * BUMP_NUMERATOR + BUMP_DENOMINATOR - 1n) / BUMP_DENOMINATOR + 1n;
      return bumped > now ? bumped : now;
    };
    const maxPriorityFeePerGas = raise(previous.maxPriorityFeePerGas, current.maxPriorityFeePerGas);
    const maxFeePerGas = raise(previous.maxFeePerGas, current.maxFeePerGas);
    const chainId = await this.c.node.chainId();
    const attempt = await this.sign(key, {
      ...this.call(row),
      chainId,
      nonce: Number(row.nonce),
      gas: BigInt(previous.gas),
      maxFeePerGas: maxFeePerGas > maxPriorityFeePerGas ? maxFeePerGas : maxPriorityFeePerGas,
      maxPriorityFeePerGas,
    });
    const attempts = await this.c.transact(async (tx) => {
      const payout = await lockPayout(tx, row.id, 'broadcast');
      if (!payout || latest(payout).hash !== previous.hash) return undefined;
      await this.record(tx, payout, [...payout.attempts, attempt], BigInt(row.nonce ?? 0));
      return [...payout.attempts, attempt];
    });
    if (!attempts) return;
    this.c.logger.info(
      { network: this.c.config.network, payout: row.id, replaces: previous.hash, txHash: attempt.hash },
      'payout not mined in time: re-signed with higher fees',
    );
    await this.send(row.id, attempts);
  }

  private async record(
    tx: Tx,
    payout: Selectable<EvmTransfersTable>,
    attempts: EvmPayoutAttempt[],
    nonce: bigint,
  ): Promise<void> {
    const now = this.c.clock.now();
    const hash = attempts.at(-1)?.hash ?? null;
    const updated = await tx
      .updateTable('evm_transfers')
      .set({
        status: 'broadcast',
        nonce,
        tx_hash: hash,
        attempts: JSON.stringify(attempts),
        last_broadcast_at: now,
        last_error: null,
      })
      .where('id', '=', payout.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    // The owner learns the hash now (a refund shows it), before the transaction leaves this machine.
    await this.c.sinks.tell(tx, { kind: 'seen', transfer: toChainTransfer(updated, now) });
  }

  /**
   * Broadcasts the latest version. A spent nonce is fine when one of the versions was mined (the
   * scanner confirms it); when none was, someone else spent the hot wallet's nonce and the payout can
   * never be mined: said as an error, not retried in a loop (a bump re-signs it after a while).
   */
  private async send(id: string, attempts: EvmPayoutAttempt[]): Promise<void> {
    const raw = attempts.at(-1)?.raw as Hex;
    const outcome = await this.c.node.broadcast(raw);
    this.sentHere.add(id);
    if (outcome === 'sent') return;
    const mined = await Promise.all(attempts.map((a) => this.c.node.succeeded(a.hash as Hex)));
    if (mined.some((m) => m !== undefined)) return;
    throw new Error(
      'its nonce was spent by a transaction Tessera did not sign (the hot wallet must be used by Tessera alone)',
    );
  }

  private isStuck(row: Selectable<EvmTransfersTable>): boolean {
    const since = row.last_broadcast_at ?? row.created_at;
    return this.c.clock.now().getTime() - since.getTime() >= BUMP_AFTER_SECONDS * 1000;
  }

  private call(row: Selectable<EvmTransfersTable>): Pick<PayoutCall, 'to' | 'native' | 'token'> {
    const to = row.address as `0x${string}`;
    const amount = BigInt(row.amount) * unitsPerLedgerUnit(this.c.config, row.asset);
    const token = this.c.config.tokens.find((t) => t.asset === row.asset);
    return token ? { to, token: { contract: token.contract, amount } } : { to, native: amount };
  }

  private async sign(key: Hex, call: PayoutCall): Promise<EvmPayoutAttempt> {
    const { hash, raw } = await signPayout(key, call);
    return {
      hash,
      raw,
      gas: call.gas.toString(),
      maxFeePerGas: call.maxFeePerGas.toString(),
      maxPriorityFeePerGas: call.maxPriorityFeePerGas.toString(),
      signedAt: this.c.clock.now().toISOString(),
    };
  }
}

/** The payout, locked, if it is still in this status (another process may have moved it on). */
function lockPayout(tx: Tx, id: string, status: 'queued' | 'broadcast') {
  return tx
    .selectFrom('evm_transfers')
    .selectAll()
    .where('id', '=', id)
    .where('status', '=', status)
    .forUpdate()
    .executeTakeFirst();
}

function latest(row: Selectable<EvmTransfersTable>): EvmPayoutAttempt {
  const attempt = row.attempts.at(-1);
  if (!attempt) throw new Error(`payout ${row.id} has no signed transaction`);
  return attempt;
}
