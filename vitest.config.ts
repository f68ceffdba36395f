import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['packages/server/test/harness/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
        },
      },
      {
        // The API tests again, every write with an Idempotency-Key: each request then runs as one unit of
        // work (one transaction, savepoints inside), a different path through the database layer.
        extends: true,
        test: {
          name: 'keyed',
          include: [
            'packages/server/test/{payments,issuing,crypto,admin}/**/*.test.ts',
            'packages/server/test/e2e/*-journey.test.ts',
            'packages/server/test/e2e/on-us-payment.test.ts',
          ],
          env: { TESSERA_TEST_KEYED: '1' },
        },
      },
    ],
  },
});
