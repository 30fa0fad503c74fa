/**
 * `npm run check-rules` as users run it (the script through tsx): the shipped rules all fire and
 * reach their GPUs; a widely copied article's rules are told apart (two can never fire on vLLM);
 * with `PROMETHEUS_URL`, the series each name has now in a real, back-filled Prometheus.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineOpenMetrics } from '../fixtures/prometheus/engine-scenarios.js';
import { startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';
import { SHIPPED } from '../helpers/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ARTICLE = fileURLToPath(new URL('../fixtures/rules/source-article-rules.yml', import.meta.url));

/** Runs the script on `files` (at most 60 s), with `env` added to this process's. */
function checkRules(files: string[], env: Record<string, string> = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/check-rules.ts', ...files], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, out }));
  });
}

let prometheus: RunningPrometheus;
beforeAll(async () => {
  // Up to a minute ago: the script asks about the series that exist now.
  prometheus = await startPrometheus(engineOpenMetrics(new Date(Date.now() - 60_000)));
});
afterAll(async () => {
  await prometheus?.stop();
});

describe('npm run check-rules', () => {
  it('passes the shipped rules: each can fire, reads only names engines expose, and reaches its GPUs', async () => {
    const { code, out } = await checkRules([SHIPPED.rules]);
    expect(out).toContain('9 alerting rules');
    expect(out).not.toMatch(/NEVER FIRES|✗/);
    expect(code, out).toBe(0);
  });

  it("fails a copied article's rules, naming the two that can never fire on vLLM and why", async () => {
    const { code, out } = await checkRules([ARTICLE]);
    expect(out).toContain('✗ vllm:request_duration_seconds_bucket: no known engine version exposes it');
    expect(out).toContain('✗ vllm:request_errors_total: no vLLM engine exposes it');
    expect(out).toContain('2 of them can never fire on vLLM engines: VLLMHighLatency, VLLMHighErrorRate');
    expect(code).toBe(1);
  });

  it('with PROMETHEUS_URL, counts the series each name has now', async () => {
    const { code, out } = await checkRules([SHIPPED.rules, ARTICLE], { PROMETHEUS_URL: prometheus.url });
    expect(out).toMatch(/✓ vllm:num_requests_waiting: [^\n]*; \d+ series now/);
    expect(out).toContain('✗ vllm:request_duration_seconds_bucket: no known engine version exposes it; 0 series now');
    expect(out).toMatch(/✓ DCGM_FI_DEV_FB_USED: [^\n]*; [1-9]\d* series now/);
    expect(code).toBe(1);
  });

  it('refuses a file that is not a rule file, naming it', async () => {
    const { code, out } = await checkRules([SHIPPED.alertmanagerConfig]);
    expect(out).toContain('not a Prometheus rule file');
    expect(code).toBe(1);
  });
});
