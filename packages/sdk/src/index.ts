export {
  cryptoWebhookSignature,
  flattenForSignature,
  signCryptoWebhook,
  verifyCryptoWebhook,
} from './webhooks/crypto.ts';
export { decryptIpn, encryptIpn, ipnFormBody } from './webhooks/ipn.ts';
export { signIssuingWebhook, verifyIssuingWebhook } from './webhooks/issuing.ts';
