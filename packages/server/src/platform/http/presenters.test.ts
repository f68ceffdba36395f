import { describe, expect, it } from 'vitest';
import { presentAdminError } from '../../admin/http/present-error.ts';
import { presentCryptoError } from '../../crypto/http/present-error.ts';
import { presentIssuingError } from '../../issuing/http/present-error.ts';
import { presentPaymentsError } from '../../payments/http/present-error.ts';
import { DomainError } from '../errors/domain-error.ts';

const invalid = new DomainError('validation_failed', 'amount has too many decimals', {
  field: 'data.attributes.amount',
});
const internal = new DomainError('internal', 'pg: relation "x" does not exist');

describe('error presenters', () => {
  it('issuing: {code, message} plus machine code and field', () => {
    expect(presentIssuingError(invalid, 'req_1')).toEqual({
      status: 400,
      body: {
        code: 400,
        message: 'Bad request',
        error: 'validation_failed',
        detail: 'amount has too many decimals',
        field: 'data.attributes.amount',
        requestId: 'req_1',
      },
    });
  });

  it('payments: the error array with Validation or Exception, and service system codes', () => {
    expect(presentPaymentsError(invalid, 'req_1').body).toMatchObject({
      code: 400,
      message: 'Bad Request',
      error: [{ code: 400, type: 'Validation', field: 'data.attributes.amount' }],
    });
    const softDecline = new DomainError('payment_declined', 'soft decline', {
      details: { systemCode: 839, data: { orderId: 5 } },
    });
    expect(presentPaymentsError(softDecline, 'r').body).toMatchObject({
      code: 402,
      data: { orderId: 5 },
      error: [{ code: 839, type: 'Exception', message: 'soft decline' }],
    });
  });

  it('crypto: code, message and errors[].detail, with a JSON pointer', () => {
    expect(presentCryptoError(new DomainError('unauthenticated', 'bad key'), 'r')).toMatchObject({
      status: 401,
      body: { code: 401, message: 'invalid_api_key', errors: [{ detail: 'invalid_api_key', status: '401' }] },
    });
    expect(presentCryptoError(invalid, 'r').body).toMatchObject({
      errors: [{ source: { pointer: '/data/attributes/amount' } }],
    });
  });

  it('never shows an internal error message', () => {
    for (const present of [
      presentIssuingError,
      presentPaymentsError,
      presentCryptoError,
      presentAdminError,
    ]) {
      const { status, body } = present(internal, 'r');
      expect(status).toBe(500);
      expect(JSON.stringify(body)).not.toContain('relation');
    }
  });

  it('rate limits carry their status everywhere', () => {
    const limited = new DomainError('rate_limited', 'slow down', { retryAfterSeconds: 30 });
    for (const present of [
      presentIssuingError,
      presentPaymentsError,
      presentCryptoError,
      presentAdminError,
    ]) {
      expect(present(limited, 'r').status).toBe(429);
    }
  });
});
