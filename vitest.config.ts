import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // PostgreSQL- and Redis-backed suites share one server; files run in parallel workers,
    // each suite uses its own schema/key prefix so they do not collide.
    pool: 'forks',
  },
});
