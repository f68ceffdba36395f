// Real signature checks with audited libraries (@noble/curves, @noble/hashes); no network needed, so
// the sandbox and production use the same verifier.
import { ed25519 } from '@noble/curves/ed25519.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import type { WalletChain, WalletVerifier } from './port.ts';

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const MULTIVERSX_ADDRESS = /^erd1[02-9ac-hj-np-z]{58}$/;
const encoder = new TextEncoder();

/** EIP-191 personal_sign digest. */
export function evmMessageDigest(message: string): Uint8Array {
  const bytes = encoder.encode(message);
  return keccak_256(
    new Uint8Array([...encoder.encode(`\x19Ethereum Signed Message:\n${bytes.length}`), ...bytes]),
  );
}

/** MultiversX signed-message digest (the wallet's signMessage prefix). */
export function multiversxMessageDigest(message: string): Uint8Array {
  const bytes = encoder.encode(message);
  return keccak_256(
    new Uint8Array([...encoder.encode(`\x17Elrond Signed Message:\n${bytes.length}`), ...bytes]),
  );
}

/** EIP-55 mixed-case checksum form of an EVM address (EIP-4361 messages carry it). */
export function evmChecksumAddress(address: string): string {
  const hex = address.toLowerCase().replace(/^0x/, '');
  const hash = Buffer.from(keccak_256(encoder.encode(hex))).toString('hex');
  return `0x${[...hex].map((c, i) => (Number.parseInt(hash.charAt(i), 16) >= 8 ? c.toUpperCase() : c)).join('')}`;
}

export function evmAddressOf(uncompressedPublicKey: Uint8Array): string {
  return `0x${Buffer.from(keccak_256(uncompressedPublicKey.subarray(1)).subarray(12)).toString('hex')}`;
}

export class SignatureWalletVerifier implements WalletVerifier {
  chainOf(address: string): WalletChain | undefined {
    if (EVM_ADDRESS.test(address)) return 'evm';
    if (MULTIVERSX_ADDRESS.test(address) && bech32Decode(address)?.length === 32) return 'multiversx';
    return undefined;
  }

  normalise(address: string): string {
    return this.chainOf(address) === 'evm' ? address.toLowerCase() : address;
  }

  verify(address: string, message: string, signature: string): boolean {
    const sig = hexBytes(signature);
    if (!sig) return false;
    try {
      if (this.chainOf(address) === 'evm') {
        if (sig.length !== 65) return false;
        const v = sig[64] ?? 0;
        const recovery = v >= 27 ? v - 27 : v;
        if (recovery !== 0 && recovery !== 1) return false;
        // noble's 'recovered' format puts the recovery bit first; Ethereum puts it last.
        const recovered = secp256k1.recoverPublicKey(
          new Uint8Array([recovery, ...sig.subarray(0, 64)]),
          evmMessageDigest(message),
          {
            prehash: false,
          },
        );
        const full = secp256k1.Point.fromBytes(recovered).toBytes(false);
        return evmAddressOf(full) === address.toLowerCase();
      }
      if (this.chainOf(address) === 'multiversx') {
        const publicKey = bech32Decode(address);
        return (
          sig.length === 64 && !!publicKey && ed25519.verify(sig, multiversxMessageDigest(message), publicKey)
        );
      }
    } catch {
      return false;
    }
    return false;
  }
}

function hexBytes(text: string): Uint8Array | undefined {
  const hex = text.startsWith('0x') ? text.slice(2) : text;
  return /^([0-9a-fA-F]{2})+$/.test(hex) ? new Uint8Array(Buffer.from(hex, 'hex')) : undefined;
}

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

/** BIP-173 bech32 decode of the data part into bytes; undefined when the checksum fails. */
export function bech32Decode(address: string): Uint8Array | undefined {
  const separator = address.lastIndexOf('1');
  const hrp = address.slice(0, separator);
  const data = [...address.slice(separator + 1)].map((c) => CHARSET.indexOf(c));
  if (data.some((d) => d < 0) || data.length < 6) return undefined;
  if (polymod([...hrpExpand(hrp), ...data]) !== 1) return undefined;
  const words = data.slice(0, -6);
  let accumulator = 0;
  let bits = 0;
  const out: number[] = [];
  for (const word of words) {
    accumulator = (accumulator << 5) | word;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((accumulator >> bits) & 0xff);
    }
  }
  return new Uint8Array(out);
}

/** BIP-173 bech32 encode (tests make MultiversX addresses from generated keys). */
export function bech32Encode(hrp: string, bytes: Uint8Array): string {
  const words: number[] = [];
  let accumulator = 0;
  let bits = 0;
  for (const byte of bytes) {
    accumulator = (accumulator << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      words.push((accumulator >> bits) & 31);
    }
  }
  if (bits > 0) words.push((accumulator << (5 - bits)) & 31);
  const mod = polymod([...hrpExpand(hrp), ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => CHARSET.charAt(w)).join('')}`;
}

function hrpExpand(hrp: string): number[] {
  return [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
}

function polymod(values: number[]): number {
  const GENERATORS = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const value of values) {
    const top = chk >> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ value;
    for (let i = 0; i < 5; i++) if ((top >> i) & 1) chk ^= GENERATORS[i] ?? 0;
  }
  return chk;
}
