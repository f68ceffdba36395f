// Deposit addresses derived from a merchant's account-level extended public key, so payments go to the
// merchant's own wallet and Tessera never holds a private key: EVM at m/44'/60'/0'/0/i (the key given is
// m/44'/60'/0'), Bitcoin native SegWit (BIP84) at m/84'/0'/0'/0/i (a zpub, or an xpub of that account).
// Index i is chosen by the caller and never reused (one per order and currency).
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { HDKey } from '@scure/bip32';
import { NETWORK, p2wpkh, TEST_NETWORK } from '@scure/btc-signer';

/** SLIP-132 version bytes of the extended public keys accepted, and what they are for. */
const PUBLIC_VERSIONS = {
  xpub: { public: 0x0488b21e, private: 0x0488ade4, testnet: false },
  tpub: { public: 0x043587cf, private: 0x04358394, testnet: true },
  zpub: { public: 0x04b24746, private: 0x04b2430c, testnet: false },
  vpub: { public: 0x045f1cf6, private: 0x045f18bc, testnet: true },
} as const;
type Prefix = keyof typeof PUBLIC_VERSIONS;

const ACCOUNT_DEPTH = 3;
/** Non-hardened child indexes: 0 … 2^31 − 1. */
const MAX_INDEX = 0x7fffffff;

export class ExtendedKeyError extends Error {}

/** An account-level extended public key: the parent of the receive chain (0) and the change chain (1). */
export class AccountKey {
  private constructor(
    private readonly key: HDKey,
    readonly prefix: Prefix,
  ) {}

  /**
   * Reads an xpub, tpub, zpub or vpub. A private key (xprv…) is refused: Tessera must never hold one.
   * A key that is not at account depth (m/purpose'/coin'/account') is refused too, since addresses
   * derived from it would not be the ones the merchant's wallet shows.
   */
  static parse(text: string): AccountKey {
    const trimmed = text.trim();
    const prefix = trimmed.slice(0, 4);
    if (/^[xtzv]prv$/.test(prefix)) {
      throw new ExtendedKeyError('this is a private key: give the account’s extended public key instead');
    }
    if (!(prefix in PUBLIC_VERSIONS)) {
      throw new ExtendedKeyError('not an extended public key (xpub, tpub, zpub or vpub)');
    }
    const versions = PUBLIC_VERSIONS[prefix as Prefix];
    let key: HDKey;
    try {
      key = HDKey.fromExtendedKey(trimmed, { public: versions.public, private: versions.private });
    } catch {
      throw new ExtendedKeyError('the extended public key does not decode (mistyped or truncated?)');
    }
    if (key.depth !== ACCOUNT_DEPTH) {
      throw new ExtendedKeyError(
        `the key is at depth ${key.depth}; give the account-level key (depth 3, m/purpose'/coin'/account')`,
      );
    }
    return new AccountKey(key, prefix as Prefix);
  }

  get isTestnet(): boolean {
    return PUBLIC_VERSIONS[this.prefix].testnet;
  }

  /** The compressed public key of receive address `index` (chain 0). */
  receivePublicKey(index: number): Uint8Array {
    if (!Number.isSafeInteger(index) || index < 0 || index > MAX_INDEX) {
      throw new RangeError(`address index must be 0 to ${MAX_INDEX}`);
    }
    const child = this.key.deriveChild(0).deriveChild(index);
    if (!child.publicKey) throw new Error('derivation gave no public key');
    return child.publicKey;
  }
}

/** EIP-55 mixed-case checksum form of a 20-byte address. */
export function toChecksumAddress(address: string): string {
  const hex = address.toLowerCase().replace(/^0x/, '');
  const hash = Buffer.from(keccak_256(new TextEncoder().encode(hex))).toString('hex');
  let out = '0x';
  for (let i = 0; i < hex.length; i++) {
    out += Number.parseInt(hash[i] ?? '0', 16) >= 8 ? (hex[i] ?? '').toUpperCase() : hex[i];
  }
  return out;
}

/**
 * The EVM address of receive index `index`. BIP32 gives a compressed public key; the address is the
 * last 20 bytes of keccak-256 of the uncompressed key without its 0x04 prefix.
 */
export function evmDepositAddress(account: AccountKey, index: number): string {
  const uncompressed = secp256k1.Point.fromBytes(account.receivePublicKey(index)).toBytes(false);
  const hash = keccak_256(uncompressed.subarray(1));
  return toChecksumAddress(Buffer.from(hash.subarray(12)).toString('hex'));
}

/**
 * A store's EVM wallet as the operator types it: its first receive address (for them to compare with
 * their wallet's), or why the key is refused.
 */
export function readEvmWallet(text: string): { firstAddress: string } | { problem: string } {
  try {
    return { firstAddress: evmDepositAddress(AccountKey.parse(text), 0) };
  } catch (err) {
    if (err instanceof ExtendedKeyError) return { problem: err.message };
    throw err;
  }
}

/** The BIP84 (P2WPKH, bech32) address of receive index `index`: bc1… on mainnet, tb1… on testnet. */
export function bip84DepositAddress(account: AccountKey, index: number): string {
  const payment = p2wpkh(account.receivePublicKey(index), account.isTestnet ? TEST_NETWORK : NETWORK);
  if (!payment.address) throw new Error('no address for this key');
  return payment.address;
}
