// The wallet-verifier rail: proves a customer holds a wallet by checking a signature over a message
// Tessera issued. One port, two chains: EVM (secp256k1, EIP-191 personal_sign, EIP-4361 message text)
// and MultiversX (ed25519 over its signed-message prefix), as the real service uses erd1… addresses.

export type WalletChain = 'evm' | 'multiversx';

export interface WalletVerifier {
  /** The chain of a well-formed address, or undefined when it is neither. */
  chainOf(address: string): WalletChain | undefined;
  /** The address in its canonical stored form (lower-case hex for EVM). */
  normalise(address: string): string;
  /** True when `signature` over `message` was made by the key behind `address`. */
  verify(address: string, message: string, signature: string): boolean;
}
