// What the adapter asks of an EVM node, over JSON-RPC with viem. Nothing is cached (cacheTime 0): the
// scanner must see the chain as it is now, and a node's answers are checked, not trusted (block-scanner.ts).
import {
  BlockNotFoundError,
  createPublicClient,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  http,
  keccak256,
  type PublicClient,
  parseAbiItem,
  TransactionReceiptNotFoundError,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const TRANSFER_EVENT = parseAbiItem(
  'event Transfer(address indexed from, address indexed to, uint256 value)',
);
/** A node that does not answer within this is down as far as the adapter is concerned */
const RPC_TIMEOUT_MS = 10_000;

export interface NodeBlock {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  transactions: { hash: Hex; from: string; to: string | null; value: bigint }[];
}

export interface TokenTransfer {
  contract: string;
  txHash: Hex;
  logIndex: number;
  from: string;
  to: string;
  value: bigint;
}

export interface SignedPayout {
  hash: Hex;
  raw: Hex;
}

export interface PayoutCall {
  chainId: number;
  nonce: number;
  to: `0x${string}`;
  /** Native value in wei, or the token contract and its amount in the token's units */
  native?: bigint;
  token?: { contract: `0x${string}`; amount: bigint };
  gas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export class EvmNode {
  private readonly client: PublicClient;

  constructor(readonly rpcUrl: string) {
    this.client = createPublicClient({
      transport: http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 0 }),
      cacheTime: 0,
    });
  }

  chainId(): Promise<number> {
    return this.client.getChainId();
  }

  head(): Promise<bigint> {
    return this.client.getBlockNumber({ cacheTime: 0 });
  }

  /** The block at this height with its transactions, or undefined when the node has none there. */
  async block(number: bigint): Promise<NodeBlock | undefined> {
    try {
      const block = await this.client.getBlock({ blockNumber: number, includeTransactions: true });
      if (block.hash === null || block.number === null) return undefined;
      return {
        number: block.number,
        hash: block.hash,
        parentHash: block.parentHash,
        transactions: block.transactions.map((t) => ({
          hash: t.hash,
          from: t.from.toLowerCase(),
          to: t.to ? t.to.toLowerCase() : null,
          value: t.value,
        })),
      };
    } catch (err) {
      if (err instanceof BlockNotFoundError) return undefined;
      throw err;
    }
  }

  /** ERC-20 Transfer logs of these contracts in exactly this block (by hash, so a reorg cannot mix forks). */
  async tokenTransfers(blockHash: Hex, contracts: `0x${string}`[]): Promise<TokenTransfer[]> {
    if (contracts.length === 0) return [];
    const logs = await this.client.getLogs({ address: contracts, event: TRANSFER_EVENT, blockHash });
    return logs.flatMap((log) =>
      log.args.from &&
      log.args.to &&
      log.args.value !== undefined &&
      log.transactionHash &&
      log.logIndex !== null
        ? [
            {
              contract: log.address.toLowerCase(),
              txHash: log.transactionHash,
              logIndex: log.logIndex,
              from: log.args.from.toLowerCase(),
              to: log.args.to.toLowerCase(),
              value: log.args.value,
            },
          ]
        : [],
    );
  }

  /** Whether a mined transaction succeeded; undefined when the node knows no receipt for it. */
  async succeeded(hash: Hex): Promise<boolean | undefined> {
    try {
      return (await this.client.getTransactionReceipt({ hash })).status === 'success';
    } catch (err) {
      if (err instanceof TransactionReceiptNotFoundError) return undefined;
      throw err;
    }
  }

  /** The fees a transaction sent now should offer (EIP-1559). */
  async fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    const { maxFeePerGas, maxPriorityFeePerGas } = await this.client.estimateFeesPerGas();
    return { maxFeePerGas, maxPriorityFeePerGas };
  }

  /** Gas for a payout, with a margin for a token contract's state changing before it is mined. */
  async gasFor(from: `0x${string}`, call: Pick<PayoutCall, 'to' | 'native' | 'token'>): Promise<bigint> {
    if (!call.token) return 21_000n;
    const gas = await this.client.estimateGas({
      account: from,
      to: call.token.contract,
      data: transferData(call.to, call.token.amount),
    });
    return (gas * 12n) / 10n;
  }

  /** The sender's next nonce as the node sees it, pending transactions included. */
  nonce(address: `0x${string}`): Promise<number> {
    return this.client.getTransactionCount({ address, blockTag: 'pending' });
  }

  /**
   * Sends a signed transaction (a node that already has it is not an error). 'nonce-spent': its nonce
   * is used on the chain already — by this transaction, mined while nobody was listening, by another
   * version of it, or by someone else.
   */
  async broadcast(raw: Hex): Promise<'sent' | 'nonce-spent'> {
    try {
      await this.client.sendRawTransaction({ serializedTransaction: raw });
    } catch (err) {
      const text = errorText(err);
      if (/already known|known transaction|already imported/i.test(text)) return 'sent';
      if (/nonce too low/i.test(text)) return 'nonce-spent';
      throw err;
    }
    return 'sent';
  }
}

/** Signs a payout locally with the hot wallet's key; the hash is known before anything is sent. */
export async function signPayout(privateKey: Hex, call: PayoutCall): Promise<SignedPayout> {
  const account = privateKeyToAccount(privateKey);
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId: call.chainId,
    nonce: call.nonce,
    gas: call.gas,
    maxFeePerGas: call.maxFeePerGas,
    maxPriorityFeePerGas: call.maxPriorityFeePerGas,
    ...(call.token
      ? { to: call.token.contract, value: 0n, data: transferData(call.to, call.token.amount) }
      : { to: call.to, value: call.native ?? 0n }),
  });
  return { raw, hash: keccak256(raw) };
}

export function senderOf(privateKey: Hex): `0x${string}` {
  return privateKeyToAccount(privateKey).address;
}

function transferData(to: `0x${string}`, amount: bigint): Hex {
  return encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
}

/** The node's own words, without viem's request dump (which repeats the URL and the raw transaction). */
export function errorText(err: unknown): string {
  const e = err as { shortMessage?: string; details?: string; message?: string };
  return [e.shortMessage, e.details].filter(Boolean).join(': ') || (e.message ?? String(err));
}
