import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Scenario tests spawn the built CLI and open databases; two cores, so keep parallelism modest.
    maxWorkers: 2,
  },
});
