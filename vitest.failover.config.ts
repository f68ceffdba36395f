// `npm run test:failover`: the Postgres failover test (Debian PostgreSQL 15 and pgbouncer; .ci/run
// installs them). Kept out of `npm test`: it builds its own primary, standby and pooler.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/server/test/failover/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 180_000,
    hookTimeout: 120_000,
  },
});
