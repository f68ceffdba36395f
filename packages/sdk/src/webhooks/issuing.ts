// Card issuing webhooks: a compact JWS (HS512) over the exact body bytes in `X-Service-Signature`,
// keyed by the partner's webhook signing key (its UTF-8 bytes). No timestamp claim is added or checked.
import { compactVerify } from 'jose';

const encoder = new TextEncoder();

/**
 * Verifies a delivery as the spec's receiver must: HS512 only, and the signed payload equal to the
 * received body. Answers the parsed event, or throws when anything does not match.
 */
export async function verifyIssuingWebhook<T = unknown>(
  rawBody: string,
  signature: string | undefined,
  signingKey: string,
): Promise<T> {
  if (!signature) throw new Error('missing X-Service-Signature');
  const { payload } = await compactVerify(signature, encoder.encode(signingKey), { algorithms: ['HS512'] });
  if (new TextDecoder().decode(payload) !== rawBody)
    throw new Error('the signed payload differs from the body');
  return JSON.parse(rawBody) as T;
}
