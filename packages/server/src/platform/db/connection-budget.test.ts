import { describe, expect, it } from 'vitest';
import {
  ConnectionBudgetError,
  connectionsNeeded,
  embeddedMaxConnections,
  fitPool,
} from './connection-budget.ts';

describe('database connections of `tessera serve`', () => {
  it('counts every worker’s pool and what each opens beside it, plus some kept free', () => {
    expect(connectionsNeeded(1, 20)).toBe(36);
    expect(connectionsNeeded(16, 20)).toBe(426);
  });

  it('starts the embedded Postgres with room for them all (never below 200)', () => {
    expect(embeddedMaxConnections(1, 20)).toBe(200);
    expect(embeddedMaxConnections(16, 20)).toBe(429);
    expect(embeddedMaxConnections(16, 20)).toBeGreaterThan(connectionsNeeded(16, 20));
  });

  it('keeps the pool when it fits a server, and divides it among the workers when not', () => {
    expect(fitPool({ maxConnections: 100, reserved: 3, workers: 2, poolSize: 20 })).toEqual({ poolSize: 20 });
    // Stock Postgres (100, 3 reserved), 4 workers: (97 - 10) / 4 = 21 each, less the 6 beside the pool.
    const fitted = fitPool({ maxConnections: 100, reserved: 3, workers: 4, poolSize: 20 });
    expect(fitted.poolSize).toBe(15);
    expect(fitted.shrunk).toMatch(
      /= 114 connections, and the database allows 97 .*: each worker's pool is 15$/,
    );
    expect(connectionsNeeded(4, fitted.poolSize)).toBeLessThanOrEqual(97);
  });

  it('refuses a start that cannot fit, naming the numbers and the fix', () => {
    const tooMany = () => fitPool({ maxConnections: 100, reserved: 3, workers: 16, poolSize: 20 });
    expect(tooMany).toThrow(ConnectionBudgetError);
    expect(tooMany).toThrow(
      /16 worker\(s\) × \(TESSERA_DB_POOL_SIZE 20 \+ 6\) \+ 10 kept free = 426 connections/,
    );
    expect(tooMany).toThrow(/allows 97 \(max_connections 100 less 3 reserved\)/);
    expect(tooMany).toThrow(/Fix: put pgbouncer/);
  });
});
