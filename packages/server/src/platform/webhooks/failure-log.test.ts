// Failures summarised per endpoint (failure-log.ts): the first in a window is logged, the rest counted
// and told with the next line; an endpoint that answers again says so once; endpoints are apart.
import { describe, expect, it } from 'vitest';
import { FAILURE_LOG_WINDOW_MS, FailureLog } from './failure-log.ts';

describe('the webhook failure log', () => {
  it('logs the first failure of a window, counts the rest, and tells the count with the next line', () => {
    const log = new FailureLog();
    const shop = FailureLog.endpointOf('https://shop.example/hooks?token=secret');
    expect(shop).toBe('https://shop.example/hooks');
    expect(log.attempt(shop, true, 'ENOTFOUND', 0)).toEqual({ log: 'failure', alsoFailed: 0 });
    for (let i = 1; i <= 58; i++) expect(log.attempt(shop, true, 'ENOTFOUND', i * 1000).log).toBe('nothing');
    // Another endpoint is its own.
    expect(log.attempt('https://other.example/', true, 'ECONNREFUSED', 30_000).log).toBe('failure');
    expect(log.attempt(shop, true, 'ENOTFOUND', FAILURE_LOG_WINDOW_MS)).toEqual({
      log: 'failure',
      alsoFailed: 58,
    });
    expect(log.attempt(shop, false, undefined, FAILURE_LOG_WINDOW_MS + 1)).toEqual({
      log: 'recovered',
      failedBefore: 0,
    });
    expect(log.attempt(shop, false, undefined, FAILURE_LOG_WINDOW_MS + 2)).toEqual({ log: 'nothing' });
  });
});
