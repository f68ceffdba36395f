// The wallet challenge text. EVM wallets get an EIP-4361 "Sign-In with Ethereum" message; MultiversX
// wallets get the same fields in plain lines (they have no equivalent standard).

export interface WalletMessageInput {
  domain: string;
  uri: string;
  address: string;
  statement: string;
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
  chain: 'evm' | 'multiversx';
}

export function walletMessage(input: WalletMessageInput): string {
  const account = input.chain === 'evm' ? 'Ethereum' : 'MultiversX';
  return [
    `${input.domain} wants you to sign in with your ${account} account:`,
    input.address,
    '',
    input.statement,
    '',
    `URI: ${input.uri}`,
    'Version: 1',
    ...(input.chain === 'evm' ? ['Chain ID: 1'] : []),
    `Nonce: ${input.nonce}`,
    `Issued At: ${input.issuedAt.toISOString()}`,
    `Expiration Time: ${input.expiresAt.toISOString()}`,
  ].join('\n');
}
