// What a failed call throws: the HTTP status, the API's own error envelope as the server sent it, and the
// request id to quote when asking the operator. One class per API, so `instanceof` says which envelope
// `body` holds.
export interface IssuingErrorBody {
  code: number;
  message: string;
  error?: string;
  field?: string;
}

export interface PaymentsErrorBody {
  code: number;
  message: string;
  error: { code: number; message: string; type: 'Exception' | 'Validation'; field?: string }[];
  requestId?: string;
}

export interface CryptoErrorBody {
  code: number;
  message: string;
  errors: { detail: string; status?: string; title?: string; source?: { pointer?: string } }[];
}

export class TesseraApiError<Body = unknown> extends Error {
  constructor(
    readonly api: 'issuing' | 'payments' | 'crypto',
    readonly status: number,
    readonly body: Body,
    readonly requestId: string | null,
    message: string,
  ) {
    super(message);
    this.name = 'TesseraApiError';
  }
}

export class IssuingApiError extends TesseraApiError<IssuingErrorBody> {}
export class PaymentsApiError extends TesseraApiError<PaymentsErrorBody> {}
export class CryptoApiError extends TesseraApiError<CryptoErrorBody> {}

/** The error a failed answer of this API becomes (its message is the envelope's first reason). */
export async function apiErrorOf(
  api: 'issuing' | 'payments' | 'crypto',
  response: Response,
): Promise<TesseraApiError> {
  const text = await response.clone().text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  const requestId = response.headers.get('x-request-id');
  const reason = reasonOf(body) ?? `HTTP ${response.status}`;
  const message = `${api} API answered ${response.status}: ${reason}`;
  if (api === 'issuing')
    return new IssuingApiError(api, response.status, body as IssuingErrorBody, requestId, message);
  if (api === 'payments')
    return new PaymentsApiError(api, response.status, body as PaymentsErrorBody, requestId, message);
  return new CryptoApiError(api, response.status, body as CryptoErrorBody, requestId, message);
}

function reasonOf(body: unknown): string | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as { message?: unknown; error?: unknown; errors?: unknown };
  if (Array.isArray(b.error) && typeof b.error[0]?.message === 'string') return b.error[0].message;
  if (Array.isArray(b.errors) && typeof b.errors[0]?.detail === 'string') return b.errors[0].detail;
  return typeof b.message === 'string' ? b.message : undefined;
}
