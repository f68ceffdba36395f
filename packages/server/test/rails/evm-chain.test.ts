// The EVM chain adapter end to end against anvil: a store paid in ETH and in an ERC-20 to addresses
// derived from the merchant's own xpub, found by the block scanner through the real HTTP stack, with
// confirmations counted in blocks, a reorg that takes a payment away and gives it back, and a refund
// signed and sent from the hot wallet (replaced with higher fees when not mined), confirmed once.
import { pbkdf2Sync } from 'node:crypto';
import { HDKey } from '@scure/bip32';
import { type Hex, parseEther, parseUnits } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Anvil, anvilAccount } from '../harness/anvil.ts';
import { ConsoleClient } from '../harness/console-client.ts';
import { anOrder, aStore, chooseOnPayPage, orderOf, type TestStore } from '../harness/crypto-builders.ts';
import { eventually, freePort, Harness } from '../harness/harness.ts';
import { expectLedgerInvariants } from '../harness/ledger-invariants.ts';
import { rpcProxy } from '../harness/rpc-proxy.ts';

/** The merchant's wallet: BIP39's "abandon … about"; Tessera gets only its account xpub. */
const MERCHANT_MNEMONIC =
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const merchantXpub = HDKey.fromMasterSeed(
  pbkdf2Sync(MERCHANT_MNEMONIC, 'mnemonic', 2048, 64, 'sha512'),
).derive("m/44'/60'/0'").publicExtendedKey;
const merchantAddress = (index: number) =>
  mnemonicToAccount(MERCHANT_MNEMONIC, { addressIndex: index }).address;

const derivedByOperator = () => [0, 1, 2, 3, 4, 5, 6, 7].map(merchantAddress);

const CONFIRMATIONS = 3;
const buyer = anvilAccount(0).account;
const hotWallet = anvilAccount(1);
let anvil: Anvil;
let usdc: Hex;
let h: Harness;
let store: TestStore;

beforeAll(async () => {
  anvil = await Anvil.start();
  usdc = await anvil.deployToken(buyer, 'USDC', 6);
  await anvil.mint(buyer, usdc, buyer.address, parseUnits('1000000', 6));
  await anvil.mint(buyer, usdc, hotWallet.account.address, parseUnits('1000', 6));
  h = await Harness.start({
    captureLogs: true,
    env: {
      TESSERA_EVM_RPC_URL: anvil.url,
      TESSERA_EVM_CHAIN_ID: '31337',
      TESSERA_EVM_XPUB: merchantXpub,
      TESSERA_EVM_CONFIRMATIONS: String(CONFIRMATIONS),
      TESSERA_EVM_TOKENS: `USDC:${usdc}:6`,
      TESSERA_EVM_REFUND_PRIVATE_KEY: hotWallet.privateKey,
    },
  });
  store = await aStore(h);
  await scan(); // the scanner starts at the chain's head
}, 60_000);

afterAll(async () => {
  await h?.close();
  anvil?.stop();
});

/** Runs the sweeps (the scanner and the payout sender among them) as a clock tick does. */
const scan = () => h.advanceClock(1);

/** The buyer picks a currency on the hosted page, which shows a QR code with the address. */
async function choose(orderId: string, option: 'ETH:ETH' | 'USDC:ETH') {
  const { address, amount, page } = await chooseOnPayPage(h, orderId, option);
  expect(page).toContain('class="qr"');
  return { address, amount };
}

async function sendEth(to: Hex, amount: string): Promise<Hex> {
  return anvil.wallet(buyer).sendTransaction({ to, value: parseEther(amount) });
}

const sendersOf = async (orderId: string) =>
  (
    await h.services.db
      .selectFrom('crypto_deposits')
      .select('sender')
      .where('order_id', '=', orderId)
      .execute()
  ).map((d) => d.sender);

async function eventsOf(orderId: string): Promise<string[]> {
  const res = await h.request<{ data: { attributes: { type: string; objectIds: string[] } }[] }>(
    'GET',
    '/crypto/api/stores/events?limit=100',
    { headers: store.auth },
  );
  return res.body.data
    .filter((e) => e.attributes.objectIds.includes(orderId))
    .map((e) => e.attributes.type)
    .reverse();
}

/** A paid order and a refund of part of it, proposed and accepted by the buyer for this address. */
async function anAcceptedRefund(recipient: Hex) {
  const order = await anOrder(h, store, { total: '30.00' });
  const { address, amount } = await choose(order.id, 'ETH:ETH');
  await sendEth(address, amount);
  await anvil.mine(CONFIRMATIONS);
  await scan();
  const paid = await orderOf(h, store, order.id);
  expect(paid.status).toBe('paid');
  const proposed = await h.request<{
    data: { attributes: { decision_url: string; crypto_amount: { value: string } } };
  }>('POST', `/crypto/api/stores/refund/${paid.payment_uuid}`, {
    headers: store.auth,
    json: { data: { type: 'refunds', attributes: { amount: '10.00', reason: 'returned' } } },
  });
  expect(proposed.status).toBe(201);
  const { decision_url, crypto_amount } = proposed.body.data.attributes;
  const accepted = await h.request('POST', `${new URL(decision_url).pathname}/accept`, {
    form: { address: recipient },
  });
  expect(accepted.status).toBe(200);
  const refund = async () =>
    (
      await h.request<{ data: { attributes: { status: string; payout_transaction_hash: string | null } } }>(
        'GET',
        `/crypto/api/stores/refund/${paid.payment_uuid}`,
        { headers: store.auth },
      )
    ).body.data.attributes;
  return { order, refund, owed: parseEther(crypto_amount.value) };
}

describe('EVM chain (anvil)', () => {
  it('is ready when the node answers on the expected chain', async () => {
    const ready = await h.request<{ status: string }>('GET', '/readyz');
    expect(ready.status).toBe(200);
  });

  it('a paid order: a fresh derived address, detected in its block, paid after the confirmations', async () => {
    const order = await anOrder(h, store, { total: '25.00' });
    const { address, amount } = await choose(order.id, 'ETH:ETH');
    // The merchant's own wallet derives the same address: Tessera holds no key for it.
    expect(derivedByOperator()).toContain(address);
    const hash = await sendEth(address, amount);
    await anvil.mine();
    await scan();
    let o = await orderOf(h, store, order.id);
    expect(o.status).toBe('pending');
    expect(o.transfers).toEqual([
      expect.objectContaining({
        transaction_hash: hash,
        status: 'detected',
        confirmations: 1,
        confirmations_required: CONFIRMATIONS,
      }),
    ]);
    await anvil.mine(CONFIRMATIONS - 2);
    await scan();
    expect((await orderOf(h, store, order.id)).status).toBe('pending');
    await anvil.mine();
    await scan();
    o = await orderOf(h, store, order.id);
    expect(o.status).toBe('paid');
    expect(o.transfers[0]).toMatchObject({ status: 'confirmed', confirmations: CONFIRMATIONS });
    expect(await eventsOf(order.id)).toEqual(['ORDER.PAYMENT.DETECTED', 'ORDER.PAYMENT.RECEIVED']);
    // Who paid is kept, for screening against OFAC's listed addresses (docs/compliance.md)
    expect(await sendersOf(order.id)).toEqual([buyer.address.toLowerCase()]);
    // Another order never gets the same address.
    const next = await anOrder(h, store, { total: '1.00' });
    expect((await choose(next.id, 'ETH:ETH')).address).not.toBe(address);
  });

  it('a token payment, partial then completed: ERC-20 Transfer logs to the address', async () => {
    const order = await anOrder(h, store, { total: '40.00' });
    const { address, amount } = await choose(order.id, 'USDC:ETH');
    const total = parseUnits(amount, 6);
    await anvil.transferToken(buyer, usdc, address, total / 2n);
    await anvil.mine(CONFIRMATIONS);
    await scan();
    let o = await orderOf(h, store, order.id);
    expect(o.status).toBe('pending');
    expect(Number(o.amount_paid.value)).toBeGreaterThan(19);
    expect(Number(o.amount_due.value)).toBeGreaterThan(19);
    const rest = await choose(order.id, 'USDC:ETH');
    expect(rest.address).toBe(address);
    await anvil.transferToken(buyer, usdc, address, parseUnits(rest.amount, 6));
    await anvil.mine(CONFIRMATIONS);
    await scan();
    o = await orderOf(h, store, order.id);
    expect(o.status).toBe('paid');
    expect(o.transfers.map((t) => [t.currency, t.status])).toEqual([
      ['USDC', 'confirmed'],
      ['USDC', 'confirmed'],
    ]);
    expect(await eventsOf(order.id)).toEqual([
      'ORDER.PAYMENT.DETECTED',
      'ORDER.PAYMENT.PARTIAL',
      'ORDER.PAYMENT.DETECTED',
      'ORDER.PAYMENT.RECEIVED',
    ]);
    // A token's sender is its Transfer log's `from`
    expect(await sendersOf(order.id)).toEqual([buyer.address.toLowerCase(), buyer.address.toLowerCase()]);
  });

  it('an overpaid order is paid with the excess shown', async () => {
    const order = await anOrder(h, store, { total: '10.00' });
    const { address, amount } = await choose(order.id, 'ETH:ETH');
    await anvil.wallet(buyer).sendTransaction({ to: address, value: (parseEther(amount) * 3n) / 2n });
    await anvil.mine(CONFIRMATIONS);
    await scan();
    const o = await orderOf(h, store, order.id);
    expect(o.status).toBe('paid');
    expect(Number(o.amount_over?.value ?? 0)).toBeGreaterThan(4.9);
  });

  it('a reorg takes a detected payment away (reverted) and a later block gives it back', async () => {
    const order = await anOrder(h, store, { total: '12.00' });
    const { address, amount } = await choose(order.id, 'ETH:ETH');
    const wallet = anvil.wallet(buyer);
    const request = await wallet.prepareTransactionRequest({ to: address, value: parseEther(amount) });
    const raw = await wallet.signTransaction(request);
    const hash = await anvil.public.sendRawTransaction({ serializedTransaction: raw });
    await anvil.mine();
    await scan();
    expect((await orderOf(h, store, order.id)).transfers[0]).toMatchObject({
      transaction_hash: hash,
      status: 'detected',
    });
    // The block holding it is replaced by an empty one at the same height.
    await anvil.test.request({ method: 'anvil_reorg', params: [1, []] } as never);
    await scan();
    let o = await orderOf(h, store, order.id);
    expect(o.transfers[0]).toMatchObject({ transaction_hash: hash, status: 'reverted', confirmations: 0 });
    expect(o.amount_paid.value).toBe('0.00');
    expect(o.amount_due.value).toBe('12.00');
    expect(await eventsOf(order.id)).toEqual(['ORDER.PAYMENT.DETECTED', 'ORDER.PAYMENT.REVERTED']);
    // The same signed transaction is mined again.
    if (!(await anvil.public.getTransaction({ hash }).catch(() => undefined)))
      await anvil.public.sendRawTransaction({ serializedTransaction: raw });
    await anvil.mine(CONFIRMATIONS);
    await scan();
    o = await orderOf(h, store, order.id);
    expect(o.status).toBe('paid');
    expect(o.transfers).toHaveLength(1);
    expect(o.transfers[0]).toMatchObject({ transaction_hash: hash, status: 'confirmed' });
    expect(await eventsOf(order.id)).toEqual([
      'ORDER.PAYMENT.DETECTED',
      'ORDER.PAYMENT.REVERTED',
      'ORDER.PAYMENT.DETECTED',
      'ORDER.PAYMENT.RECEIVED',
    ]);
    await expectLedgerInvariants(h);
  });

  it('a refund is signed and sent from the hot wallet, re-signed with higher fees when stuck, and confirmed once', async () => {
    const recipient = anvilAccount(7).account.address;
    const before = await anvil.public.getBalance({ address: recipient });
    const { order, refund, owed } = await anAcceptedRefund(recipient);
    expect((await refund()).payout_transaction_hash).toBeNull();
    await scan(); // signed, hash recorded, broadcast
    const first = (await refund()).payout_transaction_hash as Hex;
    expect(first).toMatch(/^0x[0-9a-f]{64}$/);
    const a = await anvil.public.getTransaction({ hash: first });
    expect(a.from).toBe(hotWallet.account.address.toLowerCase());
    // Not mined for three minutes: replaced by the same nonce with higher fees (the node drops the first).
    await h.advanceClock(181);
    const second = (await refund()).payout_transaction_hash as Hex;
    expect(second).not.toBe(first);
    const b = await anvil.public.getTransaction({ hash: second });
    expect(b.nonce).toBe(a.nonce);
    expect(b.maxFeePerGas).toBeGreaterThan(a.maxFeePerGas ?? 0n);
    await expect(anvil.public.getTransaction({ hash: first })).rejects.toThrow(/could not be found/);
    await anvil.mine();
    await scan();
    expect((await refund()).status).toBe('accepted');
    await anvil.mine(CONFIRMATIONS);
    await scan();
    expect(await refund()).toMatchObject({ status: 'complete', payout_transaction_hash: second });
    expect(await anvil.public.getBalance({ address: recipient })).toBe(before + owed);
    expect((await orderOf(h, store, order.id)).status).toBe('refund_completed');
    // The console shows both on the chain: the deposit on the order's page, the payout on the refund's.
    const operator = await ConsoleClient.operator(h);
    const orderPage = (await operator.get(`/console/crypto/orders/${order.id}`)).text;
    const deposit = (await orderOf(h, store, order.id)).transfers[0]?.transaction_hash ?? '';
    const chainTable = orderPage.slice(orderPage.indexOf('<caption>Transfers on the chain'));
    expect(chainTable).toMatch(
      new RegExp(`<td[^>]*>${deposit}</td><td[^>]*>in</td>.*?data-status="confirmed"`),
    );
    const refundId = /href="\/console\/crypto\/refunds\/([^"]+)"/.exec(orderPage)?.[1];
    const refundPage = (await operator.get(`/console/crypto/refunds/${refundId}`)).text;
    expect(refundPage).toMatch(
      new RegExp(`<td[^>]*>${second}</td><td[^>]*>out</td>.*?data-status="confirmed"`),
    );
    // Nothing more is sent on later sweeps.
    await h.advanceClock(600);
    await anvil.mine(2);
    await scan();
    expect(await anvil.public.getBalance({ address: recipient })).toBe(before + owed);
    await expectLedgerInvariants(h);
  });

  it('a payout whose nonce someone else spent from the hot wallet is an error on the payout, not a loop', async () => {
    // Tessera counts the hot wallet's nonces since the refund above; another wallet program now sends
    // from it, taking the nonce Tessera will sign with.
    const { refund } = await anAcceptedRefund(anvilAccount(8).account.address);
    await anvil.wallet(hotWallet.account).sendTransaction({ to: buyer.address, value: 1n });
    await anvil.mine();
    await scan();
    await eventually(async () =>
      h.logs.find((l) => l.includes('spent by a transaction Tessera did not sign')),
    );
    expect((await refund()).status).toBe('accepted');
    const stuck = await h.services.db
      .selectFrom('evm_transfers')
      .select(['status', 'last_error'])
      .where('direction', '=', 'out')
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(stuck).toEqual({
      status: 'broadcast',
      last_error: expect.stringMatching(/used by Tessera alone/),
    });
    // Said once, not on every sweep.
    await scan();
    await scan();
    expect(h.logs.filter((l) => l.includes('spent by a transaction Tessera did not sign'))).toHaveLength(1);
  });

  it('a store with its own xpub gets addresses of its own wallet; a bad key is refused naming the field', async () => {
    const ownMnemonic = 'test test test test test test test test test test test junk';
    const ownXpub = HDKey.fromMasterSeed(pbkdf2Sync(ownMnemonic, 'mnemonic', 2048, 64, 'sha512')).derive(
      "m/44'/60'/0'",
    ).publicExtendedKey;
    const created = await h.admin<{ id: string; evmXpub: string | null }>('POST', '/stores', {
      json: { name: 'Own wallet shop' },
    });
    expect(created.body.evmXpub).toBeNull();
    for (const bad of [
      'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LnF5kejMRNNU3TGtRBeJgk33yuGBxrMPHi',
      'nope',
    ]) {
      const refused = await h.admin<{ error: { field?: string } }>('PATCH', `/stores/${created.body.id}`, {
        json: { evmXpub: bad },
      });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('evmXpub');
    }
    const patched = await h.admin<{ evmXpub: string }>('PATCH', `/stores/${created.body.id}`, {
      json: { evmXpub: ownXpub },
    });
    expect(patched.body.evmXpub).toBe(ownXpub);
    const own = await aStore(h);
    await h.admin('PATCH', `/stores/${own.id}`, { json: { evmXpub: ownXpub } });
    await h.admin('PUT', `/stores/${own.id}/pricing`, { json: { percentBps: 150 } });
    const order = await anOrder(h, own, { total: '3.00' });
    const { address, amount } = await choose(order.id, 'ETH:ETH');
    expect(address).toBe(mnemonicToAccount(ownMnemonic, { addressIndex: 0 }).address);
    expect(derivedByOperator()).not.toContain(address);
    // Paid into its own wallet, the store is not settled: it owes its fee (1.5 % of 3.00, half up),
    // docs/payouts.md, Crypto stores.
    await sendEth(address, amount);
    await anvil.mine(CONFIRMATIONS);
    await scan();
    expect((await orderOf(h, own, order.id)).status).toBe('paid');
    const owed = await h.admin<{ data: unknown[] }>('GET', `/stores/${own.id}/balance`);
    expect(owed.body.data).toEqual([
      { currency: 'EUR', available: '-0.05', pending: '0.00', reserved: '0.00' },
    ]);
    const movements = await h.request<{
      data: { attributes: { type: string; gross: string; fee: string; net: string } }[];
    }>('GET', '/crypto/api/stores/balance_transactions', { headers: own.auth });
    expect(movements.body.data.map((m) => m.attributes)).toMatchObject([
      { type: 'fee', gross: '0.00', fee: '0.05', net: '-0.05' },
    ]);
  });

  it('the sandbox cannot pay a real chain’s address', async () => {
    const order = await anOrder(h, store, { total: '5.00' });
    const res = await h.request<{ error?: unknown }>('POST', `/sandbox/crypto/orders/${order.id}/pay`, {
      headers: { authorization: `Bearer ${h.adminToken}` },
      json: { currency: 'ETH', network: 'ETH' },
    });
    expect(res.status).toBe(409);
    expect(res.text).toMatch(/real chain/);
  });
});

describe('EVM chain: a node that is down, on the wrong chain, or lying', () => {
  const started: Harness[] = [];
  afterAll(async () => {
    for (const one of started) await one.close();
  });
  const start = async (env: Record<string, string>) => {
    const one = await Harness.start({ captureLogs: true, env: { TESSERA_EVM_XPUB: merchantXpub, ...env } });
    started.push(one);
    return one;
  };
  const readiness = async (one: Harness) => {
    const res = await one.request<{ reason?: string }>('GET', '/readyz');
    return { status: res.status, reason: res.body.reason ?? '' };
  };

  it('the wrong chain id is said at start and on /readyz, and nothing is scanned', async () => {
    const one = await start({ TESSERA_EVM_RPC_URL: anvil.url, TESSERA_EVM_CHAIN_ID: '1' });
    await eventually(async () => one.logs.find((l) => l.includes('EVM chain not usable')));
    expect(one.logs.join('')).toMatch(/serves chain id 31337, expected 1/);
    expect(await readiness(one)).toEqual({
      status: 503,
      reason: expect.stringMatching(/chain id 31337, expected 1/),
    });
    const swept = await one.advanceClock(1);
    expect(swept.processed['evm-chain']).toBe(0);
  });

  it('an unreachable node is said at start and on /readyz', async () => {
    const closed = await freePort();
    const one = await start({ TESSERA_EVM_RPC_URL: `http://127.0.0.1:${closed}` });
    await eventually(async () => one.logs.find((l) => l.includes('EVM chain not usable')));
    expect(await readiness(one)).toEqual({
      status: 503,
      reason: expect.stringMatching(/node does not answer/),
    });
  });

  it('a node whose head runs ahead of its blocks (a gap) stops the scanner until it tells the truth', async () => {
    const proxy = await rpcProxy(anvil.url);
    try {
      const one = await start({ TESSERA_EVM_RPC_URL: proxy.url });
      await one.advanceClock(1);
      expect((await readiness(one)).status).toBe(200);
      // It now reports a head ten blocks beyond the chain's.
      proxy.handle = async (call, forward) => {
        const answer = await forward();
        if (call.method === 'eth_blockNumber' && typeof answer.result === 'string')
          answer.result = `0x${(BigInt(answer.result) + 10n).toString(16)}`;
        return answer;
      };
      await anvil.mine();
      await one.advanceClock(1);
      expect(await readiness(one)).toEqual({
        status: 503,
        reason: expect.stringMatching(/has no block \d+ \(a gap\)/),
      });
      expect(one.logs.join('')).toMatch(/EVM scanner stopped: .*a gap/);
      proxy.handle = (_call, forward) => forward();
      await one.advanceClock(1);
      expect(await readiness(one)).toEqual({ status: 200, reason: '' });
    } finally {
      proxy.close();
    }
  });
});
