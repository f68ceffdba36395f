// A cancel on the pay page reaches the shop before the buyer does (issue 48): the Utrust WooCommerce
// plugin's shop, served by one PHP process, showed the buyer its cancel page while the webhook waited
// behind it, and that page waited for the webhook — it gave up at 40 s and the event landed on a retry
// minutes later. Here a shop that serves one request at a time, whose cancel page waits (up to 3 s) for
// the webhook: the buyer must find the order cancelled when they land on it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aStore, orderDocument } from '../harness/crypto-builders.ts';
import { Harness } from '../harness/harness.ts';

let h: Harness;
let shop: Server;
let shopUrl: string;
const cancelled = new Set<string>();

/** One request at a time, in arrival order, as PHP's built-in server serves them. */
function oneAtATime(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  let chain = Promise.resolve();
  return (req: IncomingMessage, res: ServerResponse) => {
    chain = chain.then(() => handle(req, res)).catch(() => undefined);
  };
}

beforeAll(async () => {
  h = await Harness.start();
  shop = createServer(
    oneAtATime(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://shop');
      if (req.method === 'POST' && url.pathname === '/hook') {
        let body = '';
        for await (const chunk of req) body += String(chunk);
        const event = JSON.parse(body) as { event_type: string; resource: { reference: string } };
        if (event.event_type === 'ORDER.PAYMENT.CANCELLED') cancelled.add(event.resource.reference);
        res.end('ok');
        return;
      }
      // The cancel page: shows the order cancelled once the webhook said so, waiting for it a while.
      const reference = url.searchParams.get('order') ?? '';
      const until = Date.now() + 3000;
      while (!cancelled.has(reference) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      res.end(cancelled.has(reference) ? 'cancelled' : 'still waiting for the gateway');
    }),
  );
  await new Promise<void>((resolve) => shop.listen(0, '127.0.0.1', resolve));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await h.close();
  await new Promise((resolve) => shop.close(resolve));
});

describe('a cancel on the pay page', () => {
  it('reaches a shop that serves one request at a time before the buyer lands on its cancel page', async () => {
    const store = await aStore(h);
    const doc = orderDocument({ reference: 'wc-4711', callbackUrl: `${shopUrl}/hook` });
    doc.data.attributes.order.return_urls.cancel_url = `${shopUrl}/cancel?order=wc-4711`;
    const made = await h.request<{ data: { id: string } }>('POST', '/crypto/api/stores/orders', {
      headers: store.auth,
      json: doc,
    });
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    const page = await h.request('GET', `/crypto/pay/${id}`);
    const token = /name="token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
    const cancel = await fetch(`${h.baseUrl}/crypto/pay/${id}/cancel`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: h.baseUrl },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(cancel.status).toBe(303);
    const landing = await fetch(cancel.headers.get('location') as string);
    expect(await landing.text()).toBe('cancelled');
  });
});
