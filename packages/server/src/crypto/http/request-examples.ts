// The request examples of the crypto reference, written by hand where a body generated from the schema
// would be refused (its amount details did not add up to the total, its expiry was in the past). The
// examples test sends each (test/platform/every-operation-example.test.ts).
import type { RequestExamples } from '../../platform/http/openapi-document.ts';

const customer = { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', country: 'RO' };
const returnUrls = { return_url: 'https://shop.example/return', cancel_url: 'https://shop.example/cancel' };

export const CRYPTO_REQUEST_EXAMPLES: RequestExamples = {
  postStoresOrders: {
    order: {
      summary: 'An order of one item, priced in EUR',
      value: {
        data: {
          type: 'orders',
          attributes: {
            order: {
              reference: 'order-1001',
              amount: { total: '24.90', currency: 'EUR' },
              return_urls: returnUrls,
              line_items: [{ sku: 'TEE-1', name: 'T-shirt', price: '24.90', currency: 'EUR', quantity: 1 }],
            },
            customer,
          },
        },
      },
    },
    withDetails: {
      summary: 'With the amount’s details: subtotal + shipping + tax − discount = total',
      value: {
        data: {
          type: 'orders',
          attributes: {
            order: {
              reference: 'order-1002',
              amount: {
                total: '27.40',
                currency: 'EUR',
                details: { subtotal: '24.90', shipping: '4.00', tax: '0.50', discount: '2.00' },
              },
              return_urls: returnUrls,
              line_items: [{ sku: 'TEE-1', name: 'T-shirt', price: '24.90', currency: 'EUR', quantity: 1 }],
            },
            customer,
          },
        },
      },
    },
  },
};
