// A local EVM chain for the EVM adapter's tests: anvil (Foundry) from npm, a static binary, with
// automine off so each test mines the blocks it means to, and the default "test … junk" accounts.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { HDKey } from '@scure/bip32';
import {
  type Account,
  createPublicClient,
  createTestClient,
  createWalletClient,
  type Hex,
  http,
  type PublicClient,
  type TestClient,
} from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { freePort } from './harness.ts';
import { createTestDatabase } from './test-database.ts';

const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk';
const TOKEN = JSON.parse(
  readFileSync(new URL('../fixtures/evm/TestToken.json', import.meta.url), 'utf8'),
) as { abi: readonly unknown[]; bytecode: Hex };

function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  const manifest = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  return join(dirname(manifest), 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

/** One of anvil's funded accounts, with its private key (the hot wallet needs the key itself). */
export function anvilAccount(index: number): { account: Account; privateKey: Hex } {
  const account = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: index });
  const key = account.getHdKey().privateKey;
  if (!key) throw new Error('no private key');
  return { account, privateKey: `0x${Buffer.from(key).toString('hex')}` };
}

/**
 * The environment of a real `tessera serve` on a chain (test/e2e): a database of its own, fast sweeps, the
 * node's URL and a random operator xpub (any key will do where nobody spends from the deposit addresses).
 */
export async function serverOnChain(rpcUrl: string, extra: Record<string, string> = {}) {
  const databaseUrl = await createTestDatabase();
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    TESSERA_ADMIN_TOKEN: `adm_test_${randomBytes(16).toString('hex')}`,
    TESSERA_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    TESSERA_SWEEP_INTERVAL_MS: '20',
    TESSERA_EVM_RPC_URL: rpcUrl,
    TESSERA_EVM_XPUB: HDKey.fromMasterSeed(randomBytes(32)).derive("m/44'/60'/0'").publicExtendedKey,
    ...extra,
  };
  return { env, databaseUrl };
}

export class Anvil {
  readonly public: PublicClient;
  readonly test: TestClient<'anvil'>;

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    this.public = createPublicClient({ chain: foundry, transport: http(url), cacheTime: 0 });
    this.test = createTestClient({ chain: foundry, mode: 'anvil', transport: http(url) });
  }

  static async start(): Promise<Anvil> {
    const port = await freePort();
    const child = spawn(
      anvilBinary(),
      ['--port', String(port), '--no-mining', '--quiet', '--chain-id', '31337'],
      {
        stdio: 'ignore',
      },
    );
    const anvil = new Anvil(child, `http://127.0.0.1:${port}`);
    for (let tries = 0; ; tries++) {
      try {
        await anvil.public.getChainId();
        return anvil;
      } catch (err) {
        if (tries > 100 || child.exitCode !== null) throw err;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  wallet(account: Account) {
    return createWalletClient({ account, chain: foundry, transport: http(this.url) });
  }

  async mine(blocks = 1): Promise<void> {
    await this.test.mine({ blocks });
  }

  /** Deploys the test ERC-20 (TestToken.sol) and mines it; answers its address. */
  async deployToken(owner: Account, symbol: string, decimals: number): Promise<Hex> {
    const hash = await this.wallet(owner).deployContract({
      abi: TOKEN.abi,
      bytecode: TOKEN.bytecode,
      args: [`Test ${symbol}`, symbol, decimals],
    });
    await this.mine();
    const receipt = await this.public.getTransactionReceipt({ hash });
    if (!receipt.contractAddress) throw new Error('token not deployed');
    return receipt.contractAddress;
  }

  async mint(owner: Account, token: Hex, to: Hex, amount: bigint): Promise<void> {
    await this.callToken(owner, token, 'mint', [to, amount]);
    await this.mine();
  }

  /** Sends a token transfer (mined with the next block). */
  transferToken(from: Account, token: Hex, to: Hex, amount: bigint): Promise<Hex> {
    return this.callToken(from, token, 'transfer', [to, amount]);
  }

  private callToken(from: Account, token: Hex, functionName: 'mint' | 'transfer', args: [Hex, bigint]) {
    return this.wallet(from).writeContract({ address: token, abi: TOKEN.abi, functionName, args });
  }

  stop(): void {
    this.child.kill('SIGKILL');
  }
}
