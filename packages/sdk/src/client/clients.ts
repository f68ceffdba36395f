// Typed clients of the three APIs, generated from their OpenAPI documents (src/generated, by
// openapi-typescript; `npm run sdk:generate`), called through openapi-fetch: paths, parameters, bodies and
// answers are the documents' types. Every write gets an Idempotency-Key, failed calls are retried, and an
// error answer throws the API's typed error (data is then always the success answer).
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths as CryptoPaths } from '../generated/crypto.ts';
import type { paths as IssuingPaths } from '../generated/issuing.ts';
import type { paths as PaymentsPaths } from '../generated/payments.ts';
import { apiErrorOf } from './errors.ts';
import { idempotencyKeys, retryingFetch, type TransportOptions } from './transport.ts';

export interface ClientOptions extends TransportOptions {
  /** Tessera's address, e.g. http://localhost:8080 (the API's base path is added) */
  baseUrl: string;
  /** The API's base path when the operator changed it (defaults: /issuing/v1, /payments, /crypto/api) */
  basePath?: string;
}

function clientOf<Paths extends {}>(
  api: 'issuing' | 'payments' | 'crypto',
  defaultBase: string,
  options: ClientOptions,
  headers: Record<string, string>,
): Client<Paths> {
  const client = createClient<Paths>({
    baseUrl: `${options.baseUrl.replace(/\/$/, '')}${options.basePath ?? defaultBase}`,
    // JSON is asked for: a route that answers a page by default (POST /topups/fiat) answers JSON to it.
    headers: { accept: 'application/json', ...headers },
    fetch: retryingFetch(options),
  });
  const throwOnError: Middleware = {
    async onResponse({ response }) {
      if (!response.ok) throw await apiErrorOf(api, response);
      return response;
    },
  };
  client.use(idempotencyKeys, throwOnError);
  return client;
}

/** The card issuing API: as a partner's backend (partner key and id), or for one customer (access token). */
export function issuingClient(
  options: ClientOptions & { partnerApiKey?: string; partnerId?: string; accessToken?: string },
): Client<IssuingPaths> {
  return clientOf<IssuingPaths>('issuing', '/issuing/v1', options, {
    ...(options.partnerApiKey ? { 'x-partner-api-key': options.partnerApiKey } : {}),
    ...(options.partnerId ? { 'x-partner-id': options.partnerId } : {}),
    ...(options.accessToken ? { authorization: `Bearer ${options.accessToken}` } : {}),
  });
}

/** The payments API, with the merchant's API key or a site's secret key (`sk_test_…`). */
export function paymentsClient(options: ClientOptions & { apiKey: string }): Client<PaymentsPaths> {
  return clientOf<PaymentsPaths>('payments', '/payments', options, {
    authorization: `Bearer ${options.apiKey}`,
  });
}

/** The crypto merchant API, with a store's API key (`u_test_…`; from POST /stores/session). */
export function cryptoClient(options: ClientOptions & { apiKey?: string }): Client<CryptoPaths> {
  return clientOf<CryptoPaths>('crypto', '/crypto/api', options, {
    'content-type': 'application/vnd.api+json',
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
  });
}

export type { CryptoPaths, IssuingPaths, PaymentsPaths };
