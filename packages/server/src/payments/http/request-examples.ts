// The request examples of the payments reference, written by hand where a body generated from the schema
// would not be a request the sandbox accepts (it fills every field, so it mixes a card number with a
// stored card and recurring terms with a purchase). One named example per variant; "Try it out" sends the
// chosen one. Ids are the first of each kind in a fresh sandbox; the examples test sends each with the
// caller's own (test/platform/every-operation-example.test.ts).
import type { RequestExamples } from '../../platform/http/openapi-document.ts';

const newCard = {
  cardNumber: '4111111111111111',
  cardExpiryDate: '12/30',
  cardCvv: '123',
  cardHolderName: 'Ada Lovelace',
  cardHolderCountry: 'RO',
};

const twoBooks = {
  orderType: 'purchase',
  customerId: 10001,
  amount: '24.90',
  currency: 'EUR',
  description: 'Two books',
};

export const PAYMENTS_REQUEST_EXAMPLES: RequestExamples = {
  postCustomer: {
    customer: {
      summary: 'A customer of the site (every order needs one)',
      value: {
        identifier: 'customer-42',
        email: 'ada@example.com',
        firstName: 'Ada',
        lastName: 'Lovelace',
        country: 'RO',
      },
    },
  },
  postOrder: {
    purchase: {
      summary: 'A purchase with a new card (approved test card), its card saved',
      value: { ...twoBooks, externalOrderId: 'order-1001', ...newCard, saveCard: true },
    },
    authorizeOnly: {
      summary: 'An authorization only, captured later with PUT /transaction/{id}',
      value: { ...twoBooks, cardTransactionMode: 'auth', ...newCard },
    },
    storedCard: {
      summary: 'A purchase with a card saved earlier (the customer’s own cardId)',
      value: {
        orderType: 'purchase',
        customerId: 10001,
        amount: '9.90',
        currency: 'EUR',
        description: 'An e-book',
        cardId: 10001,
      },
    },
    recurring: {
      summary: 'A monthly subscription: the first bill now, then every month with the stored card',
      value: {
        orderType: 'recurring',
        customerId: 10001,
        amount: '7.99',
        currency: 'EUR',
        description: 'Monthly plan',
        intervalType: 'month',
        intervalValue: 1,
        retryPayment: 'P1D,P3D',
        ...newCard,
      },
    },
  },
};
