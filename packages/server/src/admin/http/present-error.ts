// The operator's admin and sandbox APIs answer errors as `{error: {code, message, field?}, requestId}`.
import type { ErrorPresenter } from '../../platform/http/api-scope.ts';

export const presentAdminError: ErrorPresenter = (error, requestId) => ({
  status: error.status,
  body: {
    error: {
      code: error.code,
      message: error.code === 'internal' ? 'internal error' : error.message,
      ...(error.field ? { field: error.field } : {}),
      ...(error.details && error.status < 500 ? { details: error.details } : {}),
    },
    requestId,
  },
});
