export { cryptoWebhookSignature, verifyCryptoWebhook } from './webhooks/crypto.ts';
export { decryptIpn } from './webhooks/ipn.ts';
export { verifyIssuingWebhook } from './webhooks/issuing.ts';
