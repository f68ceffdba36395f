// @tessera/sdk: typed clients of Tessera's three APIs, and the verifiers of their webhooks and IPNs.

export type { ClientOptions, CryptoPaths, IssuingPaths, PaymentsPaths } from './client/clients.ts';
export { cryptoClient, issuingClient, paymentsClient } from './client/clients.ts';
export {
  CryptoApiError,
  type CryptoErrorBody,
  IssuingApiError,
  type IssuingErrorBody,
  PaymentsApiError,
  type PaymentsErrorBody,
  TesseraApiError,
} from './client/errors.ts';
export type { TransportOptions } from './client/transport.ts';
export { cryptoWebhookSignature, verifyCryptoWebhook } from './webhooks/crypto.ts';
export { decryptIpn } from './webhooks/ipn.ts';
export { verifyIssuingWebhook } from './webhooks/issuing.ts';
