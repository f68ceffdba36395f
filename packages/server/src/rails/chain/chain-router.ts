// One chain rail over its adapters: a network served by a real chain (the EVM adapter, when configured)
// goes there; every other network stays on the simulator.
import type { Executor, Tx } from '../../platform/db/database.ts';
import { invalidState } from '../../platform/errors/domain-error.ts';
import type { ChainSandbox } from '../sandbox.ts';
import type { ChainSimulator } from './chain-simulator.ts';
import type { EvmChain } from './evm/evm-chain.ts';
import type { ChainRail, ChainSink, ChainTransfer, TransferProgress } from './port.ts';

export class ChainRouter implements ChainRail, ChainSandbox {
  constructor(
    private readonly simulator: ChainSimulator,
    private readonly evm: EvmChain | undefined,
  ) {}

  private adapter(network: string): ChainRail {
    return this.evm && network === this.evm.network ? this.evm : this.simulator;
  }

  connect(prefix: string, sink: ChainSink): void {
    this.simulator.connect(prefix, sink);
    this.evm?.connect(prefix, sink);
  }

  isRealChain(network: string): boolean {
    return this.adapter(network) !== this.simulator;
  }

  isValidAddress(network: string, address: string): boolean {
    return this.adapter(network).isValidAddress(network, address);
  }

  depositAddress(
    db: Executor,
    input: { network: string; asset: string; reference: string; accountKey?: string | null },
  ): Promise<string> {
    return this.adapter(input.network).depositAddress(db, input);
  }

  send(
    tx: Tx,
    input: { network: string; asset: string; address: string; amount: bigint; reference: string },
  ): Promise<{ transactionHash: string | null }> {
    return this.adapter(input.network).send(tx, input);
  }

  async confirmations(db: Executor, transfers: readonly TransferProgress[], at: Date): Promise<number[]> {
    const real = transfers.filter((t) => this.adapter(t.network) !== this.simulator);
    const simulated = transfers.filter((t) => this.adapter(t.network) === this.simulator);
    const [fromReal, fromSimulator] = await Promise.all([
      real.length > 0 && this.evm ? this.evm.confirmations(db, real) : [],
      this.simulator.confirmations(db, simulated, at),
    ]);
    const counts = new Map<TransferProgress, number>();
    for (const [i, t] of real.entries()) counts.set(t, fromReal[i] ?? 0);
    for (const [i, t] of simulated.entries()) counts.set(t, fromSimulator[i] ?? 0);
    return transfers.map((t) => counts.get(t) ?? 0);
  }

  /** Sandbox: only simulated networks can be paid by the sandbox; a real chain is paid with a real wallet. */
  async pay(
    tx: Tx,
    input: { address: string; amount: bigint; offramp?: boolean; sender?: string },
  ): Promise<ChainTransfer> {
    if (this.evm && (await this.evm.owns(tx, input.address)))
      throw invalidState(
        `${this.evm.network} is a real chain here (TESSERA_EVM_RPC_URL): send the payment from a wallet on it`,
      );
    return this.simulator.pay(tx, input);
  }

  /** Sandbox: a reorg of a simulated transfer (a real chain's are the chain's own). */
  reorg(tx: Tx, input: { transactionHash: string; reinclude: boolean }): Promise<ChainTransfer> {
    return this.simulator.reorg(tx, input);
  }
}
