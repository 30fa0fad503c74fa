import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // The end-to-end suite starts real Prometheus and Alertmanager processes; keep
    // files parallel but bounded so two cores are not oversubscribed.
    maxWorkers: 2,
    // Node 20 here, Node 22 in Lambda: the SDK's one-time notice about 2027 releases is noise in test output.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
