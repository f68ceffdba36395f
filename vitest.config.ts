import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The tests that run real processes: Tessera itself (started, signalled, crashed, restored, built, its
 * CLI), an EVM node (anvil), and the SDK packed and installed as an integrator gets it; each takes tens of
 * seconds of processes starting. npm run test:processes; CI runs them after npm test.
 */
const PROCESS_TESTS = [
  'packages/server/test/rails/{evm-chain,evm-scan-start}.test.ts',
  'packages/server/test/payouts/money-out-cli.test.ts',
  'packages/sdk/test/packed-sdk.test.ts',
  'packages/server/test/e2e/{backup-restore,bank-file-crash,cli-build,cli,crash-under-load}.test.ts',
  'packages/server/test/e2e/{evm-payout-crash,evm-restart,graceful-shutdown,payout-backlog-crash}.test.ts',
  'packages/server/test/e2e/{production-build,start-and-cli,terminal-stop,two-processes,workers}.test.ts',
];

/**
 * Long suites whose size is a knob: every documented operation fuzzed (npm run fuzz, FUZZ_RUNS) and money
 * out over random histories (npm run test:money, TESSERA_PROPERTY_RUNS). CI runs both, bounded, with more
 * cases than npm test could afford; npm test leaves them to those scripts.
 */
const BOUNDED_TESTS = [
  'packages/server/test/fuzz/**/*.test.ts',
  'packages/server/test/payouts/money-out-properties.test.ts',
];

/** The pages a person sees, driven in Debian's Chromium: npm run test:browser; CI requires and runs them. */
const BROWSER_TESTS = 'packages/server/test/browser/**/*.test.ts';

export default defineConfig({
  // The suite runs the SDK from its sources; the built package is tested from its tarball
  // (packages/sdk/test/packed-sdk.test.ts).
  resolve: {
    alias: { '@tessera/sdk': fileURLToPath(new URL('packages/sdk/src/index.ts', import.meta.url)) },
  },
  test: {
    globalSetup: ['packages/server/test/harness/global-setup.ts'],
    pool: 'forks',
    // Two workers on CI's two cores (vitest's default is one fewer than the cores: one). A test file waits on
    // Postgres, its simulators and its sockets for much of its time, so a second file fills those waits: the
    // suite went from 1,315 s to 715 s on this machine (docs/testing.md). The process suite runs two files at
    // once too (its npm script sets TESSERA_TEST_WORKERS=2: 455 s → 320 s); the browser suite keeps one
    // (TESSERA_TEST_WORKERS=1): two Chromiums at once time out.
    maxWorkers: Number(process.env.TESSERA_TEST_WORKERS ?? Math.max(2, availableParallelism() - 1)),
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
          // npm run test:failover (vitest.failover.config.ts), test:processes, test:browser, fuzz, test:money
          exclude: ['packages/server/test/failover/**', ...PROCESS_TESTS, BROWSER_TESTS, ...BOUNDED_TESTS],
        },
      },
      {
        // The API tests again, every write with an Idempotency-Key: each request then runs as one unit of
        // work (one transaction, savepoints inside), a different path through the database layer.
        // npm run test:keyed; CI runs it after npm test.
        extends: true,
        test: {
          name: 'keyed',
          include: [
            'packages/server/test/{payments,issuing,crypto,admin}/**/*.test.ts',
            'packages/server/test/payouts/{site-payouts,store-payouts,money-out-properties}.test.ts',
            'packages/server/test/e2e/*-journey.test.ts',
            'packages/server/test/e2e/on-us-payment.test.ts',
            'packages/server/test/risk/{payments-charge-rules,issuing-authorization-rules,money-out-rules,crypto-rules}.test.ts',
          ],
          env: { TESSERA_TEST_KEYED: '1' },
        },
      },
      { extends: true, test: { name: 'processes', include: PROCESS_TESTS } },
      { extends: true, test: { name: 'bounded', include: BOUNDED_TESTS } },
      { extends: true, test: { name: 'browser', include: [BROWSER_TESTS] } },
    ],
  },
});
