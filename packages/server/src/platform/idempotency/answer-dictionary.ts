// The preset dictionary a key's stored answer is deflated with (issue 54; docs/architecture.md, Idempotency
// keys). An answer is a few hundred bytes of JSON whose keys and fixed words are the same on every write of
// a route: deflate alone finds nothing to refer back to in so little text (a 500-byte card transaction
// compresses by half), but with these fragments as its past it refers to them from the first byte, and the
// same answer is a third of its size. The fragments are the routes' own field names and fixed values, the
// hottest last (deflate's nearest distances cost least). The stored answers name this text by their first
// byte (idempotency-store.ts), so it never changes once released: a better one is a new format byte.

const FRAGMENTS = [
  // The error envelopes: the payments API's validation list, the issuing API's one error
  '{"code":400,"message":"Bad Request","error":[{"code":400,"message":"","type":"Validation","field":""}]',
  '{"code":404,"message":"Not found","error":"not_found","detail":"',
  '{"code":409,"message":"Conflict","error":"invalid_state","detail":"',
  '{"code":400,"message":"Bad request","error":"validation_failed","detail":"","field":"',
  ',"details":{},"requestId":"req_01',
  // The issuing API's cardholders, cards, disputes
  '{"customerId":"cust_01","accessToken":"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJ0eXAiOiJhY2Nlc3MiLCJwaWQiOiJwdG5fMDF',
  '","refreshToken":"rt_","tokenType":"Bearer","expiresIn":900,"refreshExpiresIn":2592000}',
  '{"disputeId":"","status":"under_review","reason":"fraud","explanation":null,"provisionalCredit":"',
  '","unrecoveredAmount":"0.00","decideBy":"","decidedAt":null}',
  '{"cardId":"","status":"active","isVirtual":true,"last4":"","balance":"","availableBalance":"',
  // The crypto API (JSON:API): an order's redirect, a resource
  '{"data":{"type":"orders","id":"","attributes":{"status":"pending","amount":"","currency":"',
  '","created_at":"","expires_at":"","payment_url":"https://',
  '{"data":{"type":"orders_redirect","id":"","attributes":{"redirect_url":"http://127.0.0.1/crypto/pay/?uuid=',
  // The payments API: a payment, an order made and paid
  '{"code":200,"message":"OK","data":{"id":,"status":"complete-ok","amount":"","currency":"EUR","isRedirect":false',
  '{"code":201,"message":"Created","data":{"orderId":,"transactionId":,"cardId":,"is3d":0,"isRedirect":false,"orderStatus":"complete-ok","transactionStatus":"complete-ok"}}',
  // A card transaction (the card network's authorization, a clearing): the hottest answer
  '{"transactionId":"","type":"card_payment","status":"authorized","cardId":"","accountId":"","amount":"',
  '","settledAmount":null,"heldAmount":"","refundedAmount":"0.00","forcePost":false,',
  '"originalTransactionId":null,"currency":"EUR","merchant":"","declineReason":null,"threeDS":null,',
  '"createdAt":"20","authorizedAt":"20","settledAt":null,"holdExpiresAt":"20',
];

/** Version 1 of the dictionary, as deflate's preset dictionary */
export const ANSWER_DICTIONARY_V1 = Buffer.from(FRAGMENTS.join(''), 'utf8');
