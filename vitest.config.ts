import { defineConfig } from 'vitest/config';

/**
 * Test tiers as vitest projects: `npm run test:unit` (pure code, no process or socket beyond loopback
 * servers in-process), `test:integration` (dynalite, loopback platform servers), `test:e2e` (real
 * Prometheus, Alertmanager, Chromium), `test:infra` (CDK synth, real bundles), `test:config` (the shipped
 * Prometheus rules and harness with promtool). `npm test` runs them all.
 */
const tier = (name: string, extra: Record<string, unknown> = {}) => ({
  extends: true as const,
  test: { name, include: [`test/${name}/**/*.test.ts`], ...extra },
});

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // The end-to-end suite starts real Prometheus and Alertmanager processes; keep
    // files parallel but bounded so two cores are not oversubscribed.
    maxWorkers: 2,
    // Node 20 here, Node 22 in Lambda: the SDK's one-time notice about 2027 releases is noise in test output.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // The routing file's reader is loaded lazily by the entry points; tests call loadConfig directly.
    setupFiles: ['test/helpers/routing-reader.setup.ts'],
    projects: [
      // Unit tests share nothing mutable between files: one module graph per worker, not per file,
      // saves most of the tier's time (its cost was importing, not testing).
      tier('unit', { isolate: false }),
      tier('integration'),
      tier('e2e'),
      // Every documented stack variant synthesized once per run, shared by the tier's files (test/infra/assembly).
      tier('infra', { globalSetup: ['test/infra/assembly/setup.ts'] }),
      tier('config'),
    ],
  },
});
