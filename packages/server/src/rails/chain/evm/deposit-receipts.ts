// What a block sends to the deposit addresses Tessera handed out (block-scanner.ts): native transfers
// among its transactions and ERC-20 Transfer logs of the configured tokens, each with who sent it (the
// transaction's sender or the log's `from`: screened against OFAC's listed addresses downstream).
import { unitsPerLedgerUnit } from './evm-config.ts';
import type { EvmContext } from './evm-context.ts';
import type { NodeBlock } from './evm-node.ts';

export interface Receipt {
  address: string;
  asset: string;
  reference: string;
  txHash: string;
  amount: bigint;
  /** Who sent it: the transaction's sender, or a token Transfer's `from` */
  from: string;
}

/**
 * What the block sends to deposit addresses, by transfer id: the transaction hash, with -1, -2… for a
 * second and further transfer in one transaction (native first, then logs in order), so ids stay the
 * same when a reorg puts the transaction in another block.
 */
export async function depositReceipts(c: EvmContext, block: NodeBlock): Promise<Map<string, Receipt>> {
  const { config, node, db } = c;
  const found: {
    address: string;
    contractOrNative: string;
    txHash: string;
    value: bigint;
    from: string;
  }[] = [];
  if (config.nativeAsset) {
    for (const t of block.transactions)
      if (t.to && t.value > 0n)
        found.push({
          address: t.to,
          contractOrNative: 'native',
          txHash: t.hash,
          value: t.value,
          from: t.from,
        });
  }
  const logs = await node.tokenTransfers(
    block.hash,
    config.tokens.map((t) => t.contract),
  );
  for (const log of logs)
    found.push({
      address: log.to,
      contractOrNative: log.contract,
      txHash: log.txHash,
      value: log.value,
      from: log.from,
    });
  if (found.length === 0) return new Map();
  const owned = await db
    .selectFrom('evm_addresses')
    .select(['address', 'asset', 'reference'])
    .where('network', '=', config.network)
    .where('address', 'in', [...new Set(found.map((f) => f.address))])
    .execute();
  const receipts = new Map<string, Receipt>();
  const perTransaction = new Map<string, number>();
  for (const f of found) {
    const owner = owned.find((o) => o.address === f.address);
    if (!owner) continue;
    const asset =
      f.contractOrNative === 'native'
        ? config.nativeAsset
        : config.tokens.find((t) => t.contract === f.contractOrNative)?.asset;
    if (asset !== owner.asset) {
      c.logger.warn(
        { network: config.network, txHash: f.txHash, sent: asset, expected: owner.asset },
        'a deposit address received another asset than its own; it is in the merchant’s wallet, not credited',
      );
      continue;
    }
    // A native transfer in a block's list may have failed (a contract sender out of gas): receipts say.
    if (f.contractOrNative === 'native' && !(await node.succeeded(f.txHash as `0x${string}`))) continue;
    const amount = f.value / unitsPerLedgerUnit(config, asset);
    if (amount === 0n) continue;
    const n = perTransaction.get(f.txHash) ?? 0;
    perTransaction.set(f.txHash, n + 1);
    receipts.set(n === 0 ? f.txHash : `${f.txHash}-${n}`, {
      ...owner,
      txHash: f.txHash,
      amount,
      from: f.from,
    });
  }
  return receipts;
}
