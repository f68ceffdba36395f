// A refund payout killed mid-broadcast: a real `tessera serve` signs the payout, commits its hash, and
// is SIGKILLed while its eth_sendRawTransaction is in flight (held by a JSON-RPC proxy in front of
// anvil). After the restart the same signed transaction is sent (never a second nonce); when the first
// send did reach the chain and was mined while Tessera was down, it is recognised, not sent again.
// Either way the recipient is paid once and the refund completes with the committed hash.
import pg from 'pg';
import { type Hex, parseEther } from 'viem';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { Anvil, anvilAccount, serverOnChain } from '../harness/anvil.ts';
import { anOrder, aStore, chooseOnPayPage, orderOf, type TestStore } from '../harness/crypto-builders.ts';
import { never, type RpcProxy, rpcProxy } from '../harness/rpc-proxy.ts';
import { ServerProcess } from '../harness/server-process.ts';

const CONFIRMATIONS = 2;
const hotWallet = anvilAccount(1);
let anvil: Anvil;
let proxy: RpcProxy;
let env: Record<string, string>;
let db: pg.Client;
let server: ServerProcess;
let store: TestStore;

beforeAll(async () => {
  anvil = await Anvil.start();
  proxy = await rpcProxy(anvil.url);
  const chain = await serverOnChain(proxy.url, {
    TESSERA_EVM_CONFIRMATIONS: String(CONFIRMATIONS),
    TESSERA_EVM_REFUND_PRIVATE_KEY: hotWallet.privateKey,
  });
  env = chain.env;
  db = new pg.Client({ connectionString: chain.databaseUrl });
  await db.connect();
  server = await ServerProcess.start(env);
  store = await aStore(server);
}, 60_000);

afterAll(async () => {
  await server?.stop('SIGKILL');
  await db?.end();
  proxy?.close();
  anvil?.stop();
});

beforeEach(() => {
  proxy.handle = (_call, forward) => forward();
});

/** Whether the node knows the transaction (in its pool or mined). */
const nodeHas = (hash: Hex) =>
  anvil.public.getTransaction({ hash }).then(
    () => true,
    () => false,
  );
const sentRaw = () => proxy.calls.filter((c) => c.method === 'eth_sendRawTransaction').length;
const hotWalletNonce = () => anvil.public.getTransactionCount({ address: hotWallet.account.address });

async function payout() {
  const rows = await db.query<{
    status: string;
    tx_hash: string | null;
    attempts: unknown[];
    last_error: string | null;
  }>(
    "SELECT status, tx_hash, attempts, last_error FROM evm_transfers WHERE direction = 'out' ORDER BY created_at DESC LIMIT 1",
  );
  return rows.rows[0];
}

/** A paid order, a refund proposed and accepted by the buyer: answers what the recipient must get. */
async function anAcceptedRefund(recipient: Hex) {
  const order = await anOrder(server, store, { total: '40.00' });
  const { address, amount } = await chooseOnPayPage(server, order.id, 'ETH:ETH');
  await anvil.wallet(anvilAccount(0).account).sendTransaction({ to: address, value: parseEther(amount) });
  await anvil.mine(CONFIRMATIONS);
  await expect
    .poll(async () => (await orderOf(server, store, order.id)).status, { timeout: 10_000 })
    .toBe('paid');
  const paymentUuid = (await orderOf(server, store, order.id)).payment_uuid;
  const proposed = await server.request<{
    data: { attributes: { decision_url: string; crypto_amount: { value: string } } };
  }>('POST', `/crypto/api/stores/refund/${paymentUuid}`, {
    headers: store.auth,
    json: { data: { type: 'refunds', attributes: { amount: '15.00', reason: 'returned' } } },
  });
  expect(proposed.status, proposed.text).toBe(201);
  const { decision_url, crypto_amount } = proposed.body.data.attributes;
  const accepted = await server.request('POST', `${new URL(decision_url).pathname}/accept`, {
    form: { address: recipient },
  });
  expect(accepted.status).toBe(200);
  const refund = async () =>
    (
      await server.request<{
        data: { attributes: { status: string; payout_transaction_hash: string | null } };
      }>('GET', `/crypto/api/stores/refund/${paymentUuid}`, { headers: store.auth })
    ).body.data.attributes;
  return { refund, owed: parseEther(crypto_amount.value) };
}

/** Mines the confirmations and waits for the refund to complete with this hash. */
async function expectCompleted(
  refund: () => Promise<{ status: string; payout_transaction_hash: string | null }>,
  hash: string,
) {
  await anvil.mine(CONFIRMATIONS + 1);
  await expect.poll(refund, { timeout: 15_000 }).toMatchObject({
    status: 'complete',
    payout_transaction_hash: hash,
  });
}

it('the broadcast never left: after kill -9 the same signed transaction is sent, and mined once', async () => {
  const recipient = anvilAccount(5).account.address;
  const before = await anvil.public.getBalance({ address: recipient });
  const nonceBefore = await hotWalletNonce();
  // The node never receives the payout: the call hangs in the proxy.
  proxy.handle = (call, forward) => (call.method === 'eth_sendRawTransaction' ? never() : forward());
  const sendsBefore = sentRaw();
  const { refund, owed } = await anAcceptedRefund(recipient);
  await expect.poll(sentRaw, { timeout: 10_000 }).toBeGreaterThan(sendsBefore);
  const committed = await payout();
  expect(committed?.status).toBe('broadcast');
  const hash = committed?.tx_hash as Hex;
  expect((await refund()).payout_transaction_hash).toBe(hash);
  await server.stop('SIGKILL');
  expect(await nodeHas(hash)).toBe(false);

  proxy.handle = (_call, forward) => forward();
  server = await ServerProcess.start(env);
  await expect.poll(() => nodeHas(hash), { timeout: 10_000 }).toBe(true);
  await expectCompleted(refund, hash);
  expect(await anvil.public.getBalance({ address: recipient })).toBe(before + owed);
  expect(await hotWalletNonce()).toBe(nonceBefore + 1);
  expect((await payout())?.attempts).toHaveLength(1);
}, 60_000);

it('the broadcast reached the chain but not its answer, mined while down: recognised, not sent again', async () => {
  const recipient = anvilAccount(6).account.address;
  const before = await anvil.public.getBalance({ address: recipient });
  const nonceBefore = await hotWalletNonce();
  // The node takes the payout into its pool; its answer is lost.
  proxy.handle = async (call, forward) => {
    if (call.method !== 'eth_sendRawTransaction') return forward();
    await forward();
    return never();
  };
  const { refund, owed } = await anAcceptedRefund(recipient);
  await expect.poll(async () => (await payout())?.tx_hash, { timeout: 10_000 }).toBeTruthy();
  const hash = (await payout())?.tx_hash as Hex;
  await expect.poll(() => nodeHas(hash), { timeout: 10_000 }).toBe(true);
  await server.stop('SIGKILL');
  await anvil.mine(); // mined while Tessera is down

  // The restarted process must not see that block at first (its node lags one block, as a load-balanced
  // provider's may): it sends the payout again, the node says the nonce is spent, and the payout's own
  // hash is found mined — no error, no second transaction.
  const minedAt = await anvil.public.getBlockNumber();
  proxy.handle = async (call, forward) => {
    const answer = await forward();
    if (call.method === 'eth_blockNumber') answer.result = `0x${(minedAt - 1n).toString(16)}`;
    return answer;
  };
  const sendsBefore = sentRaw();
  server = await ServerProcess.start(env);
  await expect.poll(sentRaw, { timeout: 10_000 }).toBeGreaterThan(sendsBefore);
  proxy.handle = (_call, forward) => forward();
  await expectCompleted(refund, hash);
  expect(await anvil.public.getBalance({ address: recipient })).toBe(before + owed);
  expect(await hotWalletNonce()).toBe(nonceBefore + 1);
  expect((await payout())?.last_error).toBeNull();
  expect(server.output()).not.toMatch(/payout not sent yet/);
}, 60_000);
