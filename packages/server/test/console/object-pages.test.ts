// An object's page opens with its amount and status, its id with a Copy button, and only the actions the
// viewer's role may take now (docs/console.md, Object pages); a deposit shows the card it was paid with,
// and an issued card is named by its label and last four beside its partner's name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from '../harness/console-client.ts';
import { Harness } from '../harness/harness.ts';
import { aCardholder } from '../harness/issuing-builders.ts';
import { aCustomer, aMerchant, anOrder, newCard, payments } from '../harness/payments-builders.ts';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start();
});
afterAll(async () => {
  await h.close();
});

/** The page's head as a person reads it: the headline, and the actions offered */
function head(html: string) {
  const block = /<div class="object-head">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
  const text = (markup: string) =>
    markup
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  return {
    headline: text(/<p class="headline">([\s\S]*?)<\/p>/.exec(block)?.[1] ?? ''),
    copies: /<button type="button" class="copy[^"]*" data-copy="([^"]+)"/.exec(block)?.[1],
    actions: [...block.matchAll(/<a class="button" href="([^"]+)">([^<]+)<\/a>/g)].map(
      (m) => `${m[2]} ${m[1]}`,
    ),
  };
}

describe('an object’s page', () => {
  it('a payment: amount and status first, its id to copy, the actions the role may take, the card', async () => {
    const m = await aMerchant(h);
    const customer = await aCustomer(h, m);
    const order = await payments<{ data: { orderId: number; transactionId: number } }>(
      h,
      m,
      'POST',
      '/order',
      anOrder(customer, { ...newCard(), amount: '42.00', cardTransactionMode: 'auth' }),
    );
    expect(order.status, order.text).toBe(201);
    const { orderId, transactionId } = order.body.data;
    const base = `/console/payments/transactions/${transactionId}`;
    const finance = await ConsoleClient.member(h, { kind: 'merchant', id: String(m.id) }, 'finance');
    const viewer = await ConsoleClient.member(h, { kind: 'merchant', id: String(m.id) }, 'viewer');

    // Authorized: capture or void, for a role with finance; a viewer is offered neither.
    const authorized = head((await finance.get(base)).text);
    expect(authorized).toEqual({
      headline: '42.00 EUR Authorized, not captured',
      copies: String(transactionId),
      actions: [`Capture… ${base}/capture`, `Void… ${base}/void`],
    });
    expect(head((await viewer.get(base)).text).actions).toEqual([]);
    // The order's page offers its payment's actions.
    expect(head((await finance.get(`/console/payments/orders/${orderId}`)).text).actions).toEqual(
      authorized.actions,
    );

    // Captured: refund.
    expect((await payments(h, m, 'PUT', `/transaction/${transactionId}`, { amount: '42.00' })).status).toBe(
      200,
    );
    const page = (await finance.get(base)).text;
    expect(head(page)).toMatchObject({
      headline: '42.00 EUR Succeeded',
      actions: [`Refund… ${base}/refund`],
    });
    // The card it was paid with, from the network's BIN table, 3-D Secure said in words.
    const card = /<h2>Card<\/h2><dl class="facts">([\s\S]*?)<\/dl>/.exec(page)?.[1] ?? '';
    const facts = Object.fromEntries(
      [...card.matchAll(/<dt>([^<]*)<\/dt><dd>([^<]*)<\/dd>/g)].map((f) => [f[1], f[2]]),
    );
    expect(facts.Number).toMatch(/^VISA 411111•• •••• 1111$/i);
    expect(facts.Funding).toMatch(/^(credit|debit|prepaid) · /);
    expect(facts['Issued in']).toMatch(/^[A-Z]{2} by /);
    expect(facts['3-D Secure']).toBe('not used');
    // The holder's name is personal data: a viewer does not see it.
    expect((await viewer.get(base)).text).toContain('<dt>Holder</dt><dd>hidden from your role</dd>');
  });

  it('an issued card: named by its label and last four, its partner by name, freeze offered', async () => {
    const partner = await h.admin<{ apiKey: string }>('POST', '/partners', {
      json: { name: 'Objects partner' },
    });
    const holder = await aCardholder(h, partner.body.apiKey);
    const operator = await ConsoleClient.operator(h);
    const page = (await operator.get(`/console/issuing/cards/${holder.cardId}`)).text;
    expect(head(page)).toMatchObject({
      headline: expect.stringMatching(/^•••• \d{4} Active$/),
      copies: holder.cardId,
      actions: [`Freeze… /console/issuing/cards/${holder.cardId}/freeze`],
    });
    expect(page).toMatch(
      /<dt>Partner<\/dt><dd><a href="\/console\/issuing\/partners\/[^"]+">Objects partner<\/a><\/dd>/,
    );
    const list = (await operator.get(`/console/issuing/cards?customerId=${holder.customerId}`)).text;
    expect(list).toMatch(new RegExp(`<a href="/console/issuing/cards/${holder.cardId}">•••• \\d{4}</a>`));
  });
});
