import { describe, expect, it } from 'vitest';
import { DomainError } from '../errors/domain-error.ts';
import { asDomainError } from '../http/as-domain-error.ts';
import { isDatabaseUnavailable } from './database-unavailable.ts';

const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('a database that is not there right now', () => {
  it('is told apart from a fault of the request or the code', () => {
    for (const unavailable of [
      pgError('57P01', 'terminating connection due to administrator command'),
      pgError('57P03', 'the database system is starting up'),
      pgError('25006', 'cannot execute INSERT in a read-only transaction'),
      pgError('08006'),
      pgError('08P01', 'server conn crashed?'),
      pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:6432'),
      new Error('Connection terminated unexpectedly'),
      new Error('timeout exceeded when trying to connect'),
      new Error('wrapped', { cause: pgError('57P01') }),
    ]) {
      expect(isDatabaseUnavailable(unavailable), String(unavailable)).toBe(true);
    }
    for (const fault of [
      pgError('23505', 'duplicate key value violates unique constraint'),
      pgError('40P01', 'deadlock detected'),
      pgError('42P01', 'relation "x" does not exist'),
      new TypeError('x is undefined'),
      undefined,
    ]) {
      expect(isDatabaseUnavailable(fault), String(fault)).toBe(false);
    }
  });

  it('is a 503 with Retry-After that tells the client to retry, not an internal error', () => {
    const error = asDomainError(pgError('57P01'));
    expect(error).toMatchObject({ code: 'database_unavailable', status: 503, retryAfterSeconds: 1 });
    expect(error.message).toMatch(/retry/);
    // Also when it surfaced through a commit that failed.
    const commit = new DomainError('internal', 'the request could not be committed', {
      cause: new Error('Connection terminated unexpectedly'),
    });
    expect(asDomainError(commit).code).toBe('database_unavailable');
    // A domain answer stays what it is.
    expect(asDomainError(new DomainError('not_found', 'order not found')).code).toBe('not_found');
  });
});
