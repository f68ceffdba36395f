// Payments errors in the spec's envelope: `{code, message, data?, error: [{code, message, type, field}]}`
// where `type` is Validation for bad input and Exception otherwise. A service-specific system code can
// be supplied in details.systemCode (839 soft decline, 1627 customer exists, …); else the HTTP status.
import { STATUS_CODES } from 'node:http';
import type { ErrorPresenter } from '../../platform/http/api-scope.ts';

export const presentPaymentsError: ErrorPresenter = (error, requestId) => {
  const systemCode = typeof error.details?.systemCode === 'number' ? error.details.systemCode : error.status;
  const data = error.details?.data;
  return {
    status: error.status,
    body: {
      code: error.status,
      message: STATUS_CODES[error.status] ?? 'Error',
      ...(data !== undefined ? { data } : {}),
      error: [
        {
          code: systemCode,
          message: error.code === 'internal' ? 'internal error' : error.message,
          type: error.code === 'validation_failed' ? 'Validation' : 'Exception',
          ...(error.field ? { field: error.field } : {}),
        },
      ],
      requestId,
    },
  };
};
