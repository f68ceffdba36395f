import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The suite runs the SDK from its sources; the built package is tested from its tarball
  // (packages/sdk/test/packed-sdk.test.ts).
  resolve: {
    alias: { '@tessera/sdk': fileURLToPath(new URL('packages/sdk/src/index.ts', import.meta.url)) },
  },
  test: {
    globalSetup: ['packages/server/test/harness/global-setup.ts'],
    pool: 'forks',
    // A worker keeps its modules from one test file to the next: each file builds its own app on its own
    // database (harness.ts), so nothing a test sees lives in a module, and importing the server once per
    // worker instead of once per file takes a third off the suite (docs/testing.md).
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // file-times: each file's import and run time in test-results/file-times.json (npm run test:times)
    reporters: ['default', './packages/server/test/harness/file-times-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          // npm run test:failover (vitest.failover.config.ts)
          exclude: ['packages/server/test/failover/**'],
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
            'packages/server/test/payouts/{site-payouts,store-payouts,money-out-properties}.test.ts',
            'packages/server/test/e2e/*-journey.test.ts',
            'packages/server/test/e2e/on-us-payment.test.ts',
          ],
          env: { TESSERA_TEST_KEYED: '1' },
        },
      },
    ],
  },
});
