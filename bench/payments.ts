// Payments scenario: order creation (POST /order: purchase, authAndCapture, a new card, no 3D Secure),
// form-encoded as the service's clients send it, through the real HTTP stack with a merchant's API key:
// validation, the order, the card network simulator's authorization and capture, the ledger credit to
// the site, the IPN event, all in one transaction.

import { startBenchApp } from './bench-app.ts';
import { runHttpLoad } from './http-load.ts';
import type { Measurement } from './measure.ts';

const CUSTOMERS = 100;

export async function paymentsScenarios(
  databaseUrl: string,
  settings: { concurrency: number; seconds: number; warmupSeconds: number },
): Promise<(() => Promise<Measurement>)[]> {
  const { tessera, base, admin, call } = await startBenchApp(databaseUrl);
  const merchant = await call<{ apiKey: string }>('POST', '/admin/merchants', admin, {
    name: 'Bench merchant',
    sites: [{ name: 'Bench site' }],
  });
  const auth = { authorization: `Bearer ${merchant.apiKey}` };
  const customers: number[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const created = await call<{ data: { id: number } }>('POST', '/payments/customer', auth, {
      identifier: `bench-${i}`,
      email: `bench-${i}@example.com`,
    });
    customers.push(created.data.id);
  }
  const expiry = `12/${String((new Date().getUTCFullYear() + 3) % 100).padStart(2, '0')}`;
  const body = (customerId: number) =>
    new URLSearchParams({
      amount: '10.90',
      currency: 'EUR',
      orderType: 'purchase',
      cardTransactionMode: 'authAndCapture',
      customerId: String(customerId),
      description: 'Bench order',
      cardNumber: '4111111111111111',
      cardExpiryDate: expiry,
      cardCvv: '123',
      cardHolderName: 'Bench Buyer',
      cardHolderCountry: 'RO',
    }).toString();
  return [
    async () => {
      const result = await runHttpLoad(
        'payments order creation (purchase, authAndCapture, new card), HTTP, saturated',
        {
          url: `${base}/payments/order`,
          headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
          bodies: customers.map(body),
          expect: '"transactionStatus":"complete-ok"',
          mode: 'closed',
          concurrency: settings.concurrency,
          ratePerSecond: 0,
          seconds: settings.seconds,
          warmupSeconds: settings.warmupSeconds,
        },
      );
      await tessera.close();
      return result;
    },
  ];
}
