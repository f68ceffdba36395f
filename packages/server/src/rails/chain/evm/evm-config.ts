// The EVM chain adapter's configuration (README, Configuration; docs/evm-chain.md): which network it
// serves, where its node is, whose wallet deposits go to, which tokens it knows, and the hot wallet that
// sends accepted refunds. Read once at boot; every mistake is a configuration error naming the variable.
import { readFileSync } from 'node:fs';
import { findAsset, findNetwork } from '../../../platform/money/assets.ts';
import { AccountKey, ExtendedKeyError } from '../hd-addresses.ts';

/** A token the adapter follows: its Transfer logs are payments in `asset`. */
export interface EvmToken {
  asset: string;
  /** The ERC-20 contract, lower case */
  contract: `0x${string}`;
  /** The contract's decimals; amounts are kept in the asset's ledger exponent (at most this) */
  decimals: number;
}

export interface EvmConfig {
  rpcUrl: string;
  /** The network code the APIs show (`blockchain`), e.g. ETH */
  network: string;
  /** The chain id the node must serve; unset: the first one it served is remembered and held to */
  chainId: number | undefined;
  /** The operator's account-level extended public key (m/44'/60'/0') */
  accountKey: string;
  confirmations: number;
  /** Whether the network's native coin (ETH) is accepted: it is when the asset registry lists it there */
  nativeAsset: string | undefined;
  tokens: EvmToken[];
  /** The hot wallet's private key (0x + 64 hex), when refunds are to be paid out */
  refundPrivateKey: `0x${string}` | undefined;
}

export interface EvmEnv {
  TESSERA_EVM_RPC_URL?: string | undefined;
  TESSERA_EVM_NETWORK: string;
  TESSERA_EVM_CHAIN_ID?: number | undefined;
  TESSERA_EVM_XPUB?: string | undefined;
  TESSERA_EVM_CONFIRMATIONS: number;
  TESSERA_EVM_TOKENS: string;
  TESSERA_EVM_REFUND_PRIVATE_KEY?: string | undefined;
  TESSERA_EVM_REFUND_PRIVATE_KEY_FILE?: string | undefined;
}

/** The adapter's configuration, undefined when no RPC URL is set; problems are listed, not thrown. */
export function parseEvmConfig(env: EvmEnv, problems: string[]): EvmConfig | undefined {
  if (!env.TESSERA_EVM_RPC_URL) return undefined;
  const network = env.TESSERA_EVM_NETWORK;
  const before = problems.length;

  if (!env.TESSERA_EVM_XPUB) {
    problems.push("TESSERA_EVM_XPUB: required with TESSERA_EVM_RPC_URL (the account's xpub, m/44'/60'/0')");
  } else {
    try {
      AccountKey.parse(env.TESSERA_EVM_XPUB);
    } catch (err) {
      if (!(err instanceof ExtendedKeyError)) throw err;
      problems.push(`TESSERA_EVM_XPUB: ${err.message}`);
    }
  }

  const nativeAsset = findNetwork('ETH', network) ? 'ETH' : undefined;
  const tokens: EvmToken[] = [];
  for (const entry of env.TESSERA_EVM_TOKENS.split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const token = parseToken(entry, network);
    if (typeof token === 'string') problems.push(`TESSERA_EVM_TOKENS: ${token}`);
    else tokens.push(token);
  }
  if (!nativeAsset && tokens.length === 0 && problems.length === before) {
    problems.push(
      `TESSERA_EVM_TOKENS: ${network} has no native asset Tessera knows; list the tokens to accept`,
    );
  }

  const refundPrivateKey = readRefundKey(env, problems);
  if (problems.length > before) return undefined;
  return {
    rpcUrl: env.TESSERA_EVM_RPC_URL,
    network,
    chainId: env.TESSERA_EVM_CHAIN_ID,
    accountKey: (env.TESSERA_EVM_XPUB ?? '').trim(),
    confirmations: env.TESSERA_EVM_CONFIRMATIONS,
    nativeAsset,
    tokens,
    refundPrivateKey,
  };
}

/** `SYMBOL:0xcontract:decimals`, e.g. `USDC:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48:6`. */
function parseToken(entry: string, network: string): EvmToken | string {
  const [symbol = '', contract = '', decimalsText = '', ...rest] = entry.split(':');
  if (rest.length > 0 || !contract || !decimalsText)
    return `"${entry}" is not SYMBOL:contractAddress:decimals`;
  const asset = findAsset(symbol.toUpperCase());
  if (asset?.kind !== 'crypto') return `${symbol} is not an asset Tessera knows`;
  if (!findNetwork(asset.code, network)) return `${asset.code} does not travel on ${network} in Tessera`;
  if (!/^0x[0-9a-fA-F]{40}$/.test(contract)) return `${contract} is not a contract address (0x + 40 hex)`;
  const decimals = Number(decimalsText);
  if (!Number.isInteger(decimals) || decimals < asset.exponent || decimals > 36)
    return `${asset.code} decimals must be a whole number from ${asset.exponent} (its ledger precision) to 36`;
  return { asset: asset.code, contract: contract.toLowerCase() as `0x${string}`, decimals };
}

function readRefundKey(env: EvmEnv, problems: string[]): `0x${string}` | undefined {
  if (env.TESSERA_EVM_REFUND_PRIVATE_KEY && env.TESSERA_EVM_REFUND_PRIVATE_KEY_FILE) {
    problems.push('TESSERA_EVM_REFUND_PRIVATE_KEY_FILE: set it or TESSERA_EVM_REFUND_PRIVATE_KEY, not both');
    return undefined;
  }
  let text = env.TESSERA_EVM_REFUND_PRIVATE_KEY;
  const variable = text ? 'TESSERA_EVM_REFUND_PRIVATE_KEY' : 'TESSERA_EVM_REFUND_PRIVATE_KEY_FILE';
  if (env.TESSERA_EVM_REFUND_PRIVATE_KEY_FILE) {
    try {
      text = readFileSync(env.TESSERA_EVM_REFUND_PRIVATE_KEY_FILE, 'utf8');
    } catch (err) {
      problems.push(
        `${variable}: cannot read ${env.TESSERA_EVM_REFUND_PRIVATE_KEY_FILE} (${(err as NodeJS.ErrnoException).code})`,
      );
      return undefined;
    }
  }
  if (!text) return undefined;
  const key = text.trim().replace(/^(0x)?/, '0x');
  // Never echo the value: it is the hot wallet's key.
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) {
    problems.push(`${variable}: must be a private key of 64 hex characters (0x optional)`);
    return undefined;
  }
  return key as `0x${string}`;
}

/** How many on-chain units make one ledger unit of the asset (10^(decimals − exponent)). */
export function unitsPerLedgerUnit(config: EvmConfig, asset: string): bigint {
  const token = config.tokens.find((t) => t.asset === asset);
  const exponent = findAsset(asset)?.exponent ?? 0;
  return 10n ** BigInt((token?.decimals ?? exponent) - exponent);
}
