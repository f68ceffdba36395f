// Payments errors in the spec's envelope: `{code, message, data?, error: [{code, message, type, field}]}`
// where `type` is Validation for bad input and Exception otherwise. A service-specific system code can
// be supplied in details.systemCode (839 soft decline, 1627 customer exists, …); else the HTTP status.
import type { ErrorPresenter } from '../../platform/http/api-scope.ts';

const MESSAGES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export const presentPaymentsError: ErrorPresenter = (error, requestId) => {
  const systemCode = typeof error.details?.systemCode === 'number' ? error.details.systemCode : error.status;
  const data = error.details?.data;
  return {
    status: error.status,
    body: {
      code: error.status,
      message: MESSAGES[error.status] ?? 'Error',
      ...(data !== undefined ? { data } : {}),
      error: [
        {
          code: systemCode,
          message: error.status >= 500 ? 'internal error' : error.message,
          type: error.code === 'validation_failed' ? 'Validation' : 'Exception',
          ...(error.field ? { field: error.field } : {}),
        },
      ],
      requestId,
    },
  };
};
