import { defineConfig } from 'vitest/config';
import { lineIndependentChecksRunHere } from './test/support/ci-lines.ts';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Test files start worker pools and child processes; two cores are the budget.
    maxWorkers: 2,
    // Type tests give the same answer on every Node line: CI runs them on one (test/support/ci-lines.ts).
    typecheck: { enabled: lineIndependentChecksRunHere, include: ['test/**/*.test-d.ts'] },
  },
});
