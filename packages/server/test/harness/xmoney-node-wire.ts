// The requests xMoney's newer Node library (`xmoney` 1.1.0, the xmoney-node repository, public source)
// makes, reproduced as wire facts from its source — not its code — with only the host changed: its API
// base (api-stage.xmoney.com) becomes Tessera's payments base path, the checkout host
// (secure-stage.xmoney.com) Tessera's root.
//
// Facts used here:
// - configured with the whole secret key `sk_<test|live>_<key>`; API calls go through axios 1.13 with
//   `Authorization: Bearer <key>` (the part after the prefix), `Content-Type: application/json` and
//   `Accept: application/json`; bodies are JSON.stringify of the object passed; query params are axios's
//   (arrays as `k[]=v`);
// - answers are read as `{code, message, data, pagination?, error?}`; a 2xx answer whose `code` is ≥ 400
//   is an error too;
// - `checkout.createHosted(order)` sets `saveCard: false` when unset, and posts `jsonRequest` = base64 of
//   JSON.stringify(order) and `checksum` = base64 HMAC-SHA512 of the same text **keyed with the whole
//   secret key string** (prefix included), to the checkout host's root;
// - `webhooks.constructEvent(payload)` splits `base64(iv),base64(ciphertext)` and deciphers AES-256-CBC
//   with the key after the prefix.
import { createDecipheriv, createHmac } from 'node:crypto';

export interface NodeLibraryConfig {
  secretKey: string;
  /** Tessera's payments base URL (in place of https://api-stage.xmoney.com) */
  apiBase: string;
}

const AXIOS_HEADERS = {
  accept: 'application/json',
  'user-agent': 'axios/1.13.2',
  'accept-encoding': 'gzip, compress, deflate, br',
};

const apiKeyOf = (secretKey: string) => /^sk_(?:test|live)_(.+)$/.exec(secretKey)?.[1] ?? secretKey;

/** checkout.createHosted: the form's two fields. */
export function createHosted(config: NodeLibraryConfig, input: Record<string, unknown>) {
  const order = { ...input };
  if (order.saveCard === undefined) order.saveCard = false;
  const json = JSON.stringify(order);
  return {
    jsonRequest: Buffer.from(json).toString('base64'),
    checksum: createHmac('sha512', config.secretKey).update(json).digest('base64'),
  };
}

export interface NodeLibraryAnswer<T = unknown> {
  status: number;
  body: { code: number; message: string; data?: T; pagination?: unknown; error?: unknown[] };
}

/** One call as its axios instance sends it. */
export async function libraryRequest<T = unknown>(
  config: NodeLibraryConfig,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  options: { data?: unknown; params?: Record<string, string | number | boolean | string[]> } = {},
): Promise<NodeLibraryAnswer<T>> {
  const query = Object.entries(options.params ?? {})
    .flatMap(([k, v]) =>
      Array.isArray(v)
        ? v.map((x) => `${encodeURIComponent(`${k}[]`)}=${encodeURIComponent(x)}`)
        : [`${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`],
    )
    .join('&');
  const body = options.data === undefined ? undefined : JSON.stringify(options.data);
  const response = await fetch(`${config.apiBase}${path}${query ? `?${query}` : ''}`, {
    method,
    headers: {
      ...AXIOS_HEADERS,
      authorization: `Bearer ${apiKeyOf(config.secretKey)}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body } : {}),
  });
  return { status: response.status, body: (await response.json()) as NodeLibraryAnswer<T>['body'] };
}

/** webhooks.constructEvent. */
export function constructEvent<T = Record<string, unknown>>(config: NodeLibraryConfig, payload: string): T {
  const [iv = '', data = ''] = payload.split(',', 2);
  const decipher = createDecipheriv('aes-256-cbc', apiKeyOf(config.secretKey), Buffer.from(iv, 'base64'));
  const text = Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString(
    'utf8',
  );
  return JSON.parse(text) as T;
}
