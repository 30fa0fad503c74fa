import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // The end-to-end suite starts real Prometheus and Alertmanager processes; keep
    // files parallel but bounded so two cores are not oversubscribed.
    maxWorkers: 2,
  },
});
