// The EVM chain adapter (docs/evm-chain.md): deposits go to addresses derived from the merchant's own
// xpub (Tessera holds no key for them), a block scanner finds what they receive, and accepted refunds are
// paid from the operator's hot wallet. Work happens in one sweep (scan, then payouts), so it runs in the
// one process that holds the sweep lock and a sandbox clock advance runs it too.
import { randomUUID } from 'node:crypto';
import type { Executor, Tx } from '../../../platform/db/database.ts';
import { DomainError, invalidState } from '../../../platform/errors/domain-error.ts';
import { ChainSinks } from '../chain-sinks.ts';
import { AccountKey, evmDepositAddress } from '../hd-addresses.ts';
import type { ChainRail, ChainSink, TransferProgress } from '../port.ts';
import { BlockScanner } from './block-scanner.ts';
import { type EvmContext, wrongChain } from './evm-context.ts';
import { EvmNode, errorText } from './evm-node.ts';
import { PayoutSender } from './payout-sender.ts';

/** A readiness probe does not wait longer than this for the node */
const READINESS_TIMEOUT_MS = 3_000;
/** A scanner that has not run for this long (on the injected clock) is reported as stalled */
const STALL_SECONDS = 300;

export class EvmChain implements ChainRail {
  private readonly context: EvmContext;
  private readonly scanner: BlockScanner;
  private readonly payouts: PayoutSender;
  private readonly accountKeys = new Map<string, AccountKey>();

  constructor(deps: Omit<EvmContext, 'node' | 'sinks'>) {
    this.context = { ...deps, node: new EvmNode(deps.config.rpcUrl), sinks: new ChainSinks() };
    this.scanner = new BlockScanner(this.context);
    this.payouts = new PayoutSender(this.context);
  }

  get network(): string {
    return this.context.config.network;
  }

  /** The node's head as the scanner last saw it (undefined before its first scan). */
  get observedHead(): bigint | undefined {
    return this.scanner.head;
  }

  connect(prefix: string, sink: ChainSink): void {
    this.context.sinks.connect(prefix, sink);
  }

  isRealChain(): boolean {
    return true;
  }

  isValidAddress(_network: string, address: string): boolean {
    return /^0x[0-9a-fA-F]{40}$/.test(address);
  }

  /** The assets this chain accepts. */
  assets(): string[] {
    const { nativeAsset, tokens } = this.context.config;
    return [...(nativeAsset ? [nativeAsset] : []), ...tokens.map((t) => t.asset)];
  }

  /**
   * A fresh address per reference and asset, at the next unused index of the merchant's key (the
   * store's own, else the operator's). The index is taken in the caller's transaction, so an address is
   * never handed out twice, and a rolled-back quote gives its index back.
   */
  async depositAddress(
    db: Executor,
    input: { network: string; asset: string; reference: string; accountKey?: string | null },
  ): Promise<string> {
    this.assertServes(input.asset);
    const existing = await db
      .selectFrom('evm_addresses')
      .select(['address', 'account_key', 'derivation_index'])
      .where('reference', '=', input.reference)
      .where('network', '=', input.network)
      .where('asset', '=', input.asset)
      .executeTakeFirst();
    if (existing) return evmDepositAddress(this.accountKey(existing.account_key), existing.derivation_index);
    await this.scanCovers(db);
    const accountKey = input.accountKey ?? this.context.config.accountKey;
    await db
      .insertInto('evm_account_keys')
      .values({ account_key: accountKey })
      .onConflict((c) => c.doNothing())
      .execute();
    const { next_index: next } = await db
      .updateTable('evm_account_keys')
      .set((eb) => ({ next_index: eb('next_index', '+', 1) }))
      .where('account_key', '=', accountKey)
      .returning('next_index')
      .executeTakeFirstOrThrow();
    const index = next - 1;
    const address = evmDepositAddress(this.accountKey(accountKey), index);
    await db
      .insertInto('evm_addresses')
      .values({
        address: address.toLowerCase(),
        network: input.network,
        asset: input.asset,
        reference: input.reference,
        account_key: accountKey,
        derivation_index: index,
        created_at: this.context.clock.now(),
      })
      .execute();
    return address;
  }

  /**
   * A new address is handed out only once the scan has a starting block (normally recorded at boot): a
   * payment to it can then never fall in a block the scanner skips.
   */
  private async scanCovers(db: Executor): Promise<void> {
    try {
      await this.scanner.recordStart(db);
    } catch (err) {
      throw new DomainError('rail_unavailable', `the ${this.network} chain cannot be watched now`, {
        cause: errorText(err),
      });
    }
  }

  /** Blocks on top of each transfer's, as far as the scanner has processed the chain. */
  async confirmations(db: Executor, transfers: readonly TransferProgress[]): Promise<number[]> {
    if (transfers.length === 0) return [];
    const rows = await db
      .selectFrom('evm_transfers as t')
      .innerJoin('evm_scan_state as s', 's.network', 't.network')
      .select(['t.id', 't.status', 't.block_number', 't.confirmations_required', 's.block_number as head'])
      .where(
        't.id',
        'in',
        transfers.map((t) => t.id),
      )
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    return transfers.map((t) => {
      const row = byId.get(t.id);
      if (row?.status === 'confirmed') return row.confirmations_required;
      if (row?.status !== 'pending' || row.block_number === null) return 0;
      const blocks = Number(BigInt(row.head) - BigInt(row.block_number) + 1n);
      return Math.max(0, Math.min(row.confirmations_required, blocks));
    });
  }

  /**
   * Queues a payout from the hot wallet; it is signed, its hash recorded and broadcast after the caller
   * commits (payout-sender.ts), so a rolled-back refund sends nothing.
   */
  async send(
    tx: Tx,
    input: { network: string; asset: string; address: string; amount: bigint; reference: string },
  ): Promise<{ transactionHash: null }> {
    this.assertServes(input.asset);
    if (!this.isValidAddress(input.network, input.address))
      throw new DomainError('validation_failed', `not a ${input.network} address`, { field: 'address' });
    await tx
      .insertInto('evm_transfers')
      .values({
        id: randomUUID(),
        network: this.network,
        asset: input.asset,
        direction: 'out',
        address: input.address.toLowerCase(),
        amount: input.amount,
        reference: input.reference,
        status: 'queued',
        confirmations_required: this.context.config.confirmations,
        created_at: this.context.clock.now(),
      })
      .execute();
    return { transactionHash: null };
  }

  /** The sweep: the chain's new blocks first (deposits, confirmations, reorgs), then payouts. */
  async sweep(): Promise<number> {
    const scanned = await this.scanner.scan();
    if (scanned === undefined) return 0;
    return scanned + (await this.payouts.run());
  }

  /**
   * Checked at start: a node that is down or on the wrong chain is said loudly, not found out later. A
   * healthy one gets the scan's starting block recorded now, before the first address is handed out.
   */
  async checkAtStart(): Promise<void> {
    const problem = await this.readiness();
    if (problem) {
      this.context.logger.error({ network: this.network }, `EVM chain not usable: ${problem}`);
      return;
    }
    await this.context
      .transact((tx) => this.scanner.recordStart(tx))
      .catch((err: unknown) => {
        this.context.logger.error({ network: this.network }, `EVM chain not usable: ${errorText(err)}`);
      });
  }

  /** Why this chain cannot take payments now, or undefined when it can (GET /readyz). */
  async readiness(): Promise<string | undefined> {
    const state = await this.context.db
      .selectFrom('evm_scan_state')
      .selectAll()
      .where('network', '=', this.network)
      .executeTakeFirst();
    let chainId: number;
    try {
      chainId = await withTimeout(this.context.node.chainId(), READINESS_TIMEOUT_MS);
    } catch (err) {
      return `the ${this.network} node does not answer (${errorText(err)})`;
    }
    const expected = this.context.config.chainId ?? (state ? Number(state.chain_id) : chainId);
    if (chainId !== expected) return wrongChain(this.network, chainId, expected);
    if (state?.problem) return state.problem;
    if (state && this.context.clock.now().getTime() - state.checked_at.getTime() > STALL_SECONDS * 1000)
      return `the ${this.network} scanner has not run since ${state.checked_at.toISOString()}`;
    return undefined;
  }

  /** Whether this address is one of this chain's deposit addresses (the sandbox cannot pay those). */
  async owns(db: Executor, address: string): Promise<boolean> {
    const row = await db
      .selectFrom('evm_addresses')
      .select('address')
      .where('address', '=', address.toLowerCase())
      .executeTakeFirst();
    return row !== undefined;
  }

  private assertServes(asset: string): void {
    if (!this.assets().includes(asset))
      throw invalidState(`${asset} is not accepted on ${this.network} (TESSERA_EVM_TOKENS)`);
  }

  private accountKey(text: string): AccountKey {
    let key = this.accountKeys.get(text);
    if (!key) {
      key = AccountKey.parse(text);
      this.accountKeys.set(text, key);
    }
    return key;
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
