/**
 * The shipped Prometheus rules and config and the Alertmanager example, checked by the real
 * promtool and amtool: syntax, routing, and the rule unit tests in vllm-rules.test.yml.
 */
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { MAX_BODY_BYTES } from '../../shared/http/app.js';
import type { AlertKind } from '../../shared/enrich/types.js';
import { findBinary, runBinary } from '../helpers/binaries.js';
import { makeTempDir, SHIPPED } from '../helpers/processes.js';

const RULES_TEST = SHIPPED.rules.replace(/\.yml$/, '.test.yml');
const KINDS: readonly AlertKind[] = ['latency', 'kv_cache', 'queue', 'error_rate', 'gpu_memory', 'target_down'];

interface Rule {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

const promtool = findBinary('promtool');
const amtool = findBinary('amtool');
let dir: string;

beforeAll(async () => {
  dir = await makeTempDir('rules-test');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Copies the rules and their unit tests into the temp dir with `edit` applied to the rules. */
async function mutatedRules(edit: (rules: string) => string): Promise<string> {
  const rules = await readFile(SHIPPED.rules, 'utf8');
  const mutated = edit(rules);
  expect(mutated).not.toBe(rules);
  await writeFile(join(dir, 'vllm-rules.yml'), mutated);
  await copyFile(RULES_TEST, join(dir, 'vllm-rules.test.yml'));
  return join(dir, 'vllm-rules.test.yml');
}

describe('infra/prometheus/vllm-rules.yml', () => {
  it('passes promtool check rules', async () => {
    const result = await runBinary(promtool, ['check', 'rules', SHIPPED.rules]);
    expect(result.stderr).toBe('');
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain('SUCCESS: 9 rules found');
  });

  it('gives every alert severity, a known kind, and summary/description/runbook_url', async () => {
    const doc = parse(await readFile(SHIPPED.rules, 'utf8')) as { groups: { rules: Rule[] }[] };
    const rules = doc.groups.flatMap((g) => g.rules);
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'GPUMemoryLeak',
      'SGLangKVCacheNearlyFull',
      'SGLangQueueBacklog',
      'SGLangTimeToFirstTokenHigh',
      'VLLMErrorRateHigh',
      'VLLMKVCacheNearlyFull',
      'VLLMQueueBacklog',
      'VLLMServerDown',
      'VLLMTimeToFirstTokenHigh',
    ]);
    for (const rule of rules) {
      expect(['warning', 'critical'], rule.alert).toContain(rule.labels.severity);
      expect(KINDS, rule.alert).toContain(rule.labels.kind);
      expect(rule.annotations.summary, rule.alert).toMatch(/\{\{ \$value \| humanize\w*\s*\}\}/);
      expect(rule.annotations.description, rule.alert).toBeTruthy();
      expect(rule.annotations.runbook_url, rule.alert).toMatch(/^https:\/\/runbooks\.example\.com\/vllm\/[a-z0-9-]+$/);
      expect(rule.for, rule.alert).toMatch(/^\d+[mh]$/);
    }
    expect(new Set(rules.map((r) => r.labels.kind)).size).toBe(KINDS.length);
  });

  it('passes its promtool unit tests (each alert fires on bad series, not on healthy ones)', async () => {
    const result = await runBinary(promtool, ['test', 'rules', RULES_TEST]);
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.code, result.stdout + result.stderr).toBe(0);
  });

  it('has unit tests that catch a changed queue threshold', async () => {
    const testFile = await mutatedRules((r) =>
      r.replace('(vllm:num_requests_waiting{model_name!=""}) > 50', '(vllm:num_requests_waiting{model_name!=""}) > 60'),
    );
    const result = await runBinary(promtool, ['test', 'rules', testFile]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('alertname: VLLMQueueBacklog');
  });

  it('has unit tests that catch duplicate KV-cache alerts when both metric generations are exposed', async () => {
    const testFile = await mutatedRules((r) =>
      r.replace(
        /max by \(job, instance, namespace, pod, model_name\) \(\s*(vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc)\s*\)/,
        '($1)',
      ),
    );
    const result = await runBinary(promtool, ['test', 'rules', testFile]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('alertname: VLLMKVCacheNearlyFull');
  });

  it('has unit tests that catch an error rule no longer scoped to vLLM servers', async () => {
    const testFile = await mutatedRules((r) =>
      r.replace(' and on (job, instance) group by (job, instance) (vllm:num_requests_running{model_name!=""})', ''),
    );
    const result = await runBinary(promtool, ['test', 'rules', testFile]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('instance="api:8080"');
  });

  it("has unit tests that catch a queue rule counting production-stack's router copies", async () => {
    const testFile = await mutatedRules((r) =>
      r.replace('(vllm:num_requests_waiting{model_name!=""})', '(vllm:num_requests_waiting)'),
    );
    const result = await runBinary(promtool, ['test', 'rules', testFile]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('router re-exporting the queue');
  });

  it("has unit tests that catch an error rule counting the API server's 4xx (rejected input) as failures", async () => {
    const testFile = await mutatedRules((r) =>
      r.replaceAll('vllm:request_failure_total{code!~"4.."}', 'vllm:request_failure_total'),
    );
    const result = await runBinary(promtool, ['test', 'rules', testFile]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('instance="rejecting:8000"');
  });

  it('has unit tests that catch an error rule joining its two failure counters with a bare `or` (one hides the other)', async () => {
    // Without the `failure` label the two sums have one label set, and `or` keeps the first.
    const testFile = await mutatedRules((r) =>
      r.replaceAll(
        /label_replace\((sum by \(job, instance, namespace, pod\) \(rate\(vllm:request_\w+\{[^}]*\}\[5m\]\)\)), "failure", "\w+", "", ""\)/g,
        '$1',
      ),
    );
    const result = await runBinary(promtool, ['test', 'rules', testFile]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('instance="hidden:8000"');
  });

  it('has unit tests that catch KV-cache and error rules dropping the pod (their GPUs unreachable on Kubernetes)', async () => {
    const testFile = await mutatedRules((r) => r.replaceAll('job, instance, namespace, pod', 'job, instance'));
    const result = await runBinary(promtool, ['test', 'rules', testFile]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('pod="qwen-0"');
  });

  it('has unit tests that catch a server-down rule that recognises vLLM only by job name', async () => {
    const testFile = await mutatedRules((r) =>
      r.replace(/\n\s*or\n\s*\(up == 0 and on \(job, instance\)[^\n]*\)\)/, ''),
    );
    const result = await runBinary(promtool, ['test', 'rules', testFile]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('alertname: VLLMServerDown');
  });
});

describe('infra/prometheus/pipeline-rules.yml (the pipeline watched)', () => {
  const rules = SHIPPED.rules.replace('vllm-rules.yml', 'pipeline-rules.yml');
  const tests = rules.replace(/\.yml$/, '.test.yml');

  it('passes promtool check rules', async () => {
    const result = await runBinary(promtool, ['check', 'rules', rules]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('SUCCESS: 7 rules found');
  });

  it('passes its promtool unit tests (Watchdog, delivery failures, refusals, stale and never-seen heartbeat, down)', async () => {
    const result = await runBinary(promtool, ['test', 'rules', tests]);
    expect(result.stdout + result.stderr).toContain('SUCCESS');
    expect(result.code, result.stdout + result.stderr).toBe(0);
  });

  it('has unit tests that catch a refusal rule counting 503s (an HA peer in flight is not a refusal)', async () => {
    const text = await readFile(rules, 'utf8');
    const mutated = text.replace('{code=~"400|404|413"}', '{code=~"400|404|413|503"}');
    expect(mutated).not.toBe(text);
    await writeFile(join(dir, 'pipeline-rules.yml'), mutated);
    await copyFile(tests, join(dir, 'pipeline-rules.test.yml'));
    const result = await runBinary(promtool, ['test', 'rules', join(dir, 'pipeline-rules.test.yml')]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('alertname: AlertPipelineWebhookRefused');
  });

  it('has unit tests that catch a refusal rule counting internet noise (401s without a token)', async () => {
    const text = await readFile(rules, 'utf8');
    const mutated = text.replace('{code=~"400|404|413"}', '{code=~"4.."}');
    expect(mutated).not.toBe(text);
    await writeFile(join(dir, 'pipeline-rules.yml'), mutated);
    await copyFile(tests, join(dir, 'pipeline-rules.test.yml'));
    const result = await runBinary(promtool, ['test', 'rules', join(dir, 'pipeline-rules.test.yml')]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('Internet noise on a public URL');
  });

  it('has unit tests that catch a stale-heartbeat rule per peer (a passive HA peer is silent on purpose)', async () => {
    const text = await readFile(rules, 'utf8');
    const mutated = text.replace(
      'max by (job, instance) (llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds)',
      'max by (job, instance, alertmanager) (llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds)',
    );
    expect(mutated).not.toBe(text);
    await writeFile(join(dir, 'pipeline-rules.yml'), mutated);
    await copyFile(tests, join(dir, 'pipeline-rules.test.yml'));
    const result = await runBinary(promtool, ['test', 'rules', join(dir, 'pipeline-rules.test.yml')]);
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain('alertname: AlertPipelineHeartbeatStale');
  });
});

describe('infra/prometheus/prometheus.example.yml', () => {
  it('passes promtool check config, including the rules it loads and the pipeline scrape with its token file', async () => {
    // A copy beside copies of its rule files, its credentials_file pointed at a real file.
    const tokenFile = join(dir, 'prometheus.token');
    await writeFile(tokenFile, 'a-test-token-of-32-characters-xx');
    const shipped = await readFile(SHIPPED.prometheusConfig, 'utf8');
    const copy = shipped.replaceAll('/etc/prometheus/llm-alert-pipeline.token', tokenFile);
    expect(copy).not.toBe(shipped);
    const config = join(dir, 'prometheus-check', 'prometheus.yml');
    await mkdir(join(dir, 'prometheus-check'), { recursive: true });
    await writeFile(config, copy);
    for (const name of ['vllm-rules.yml', 'pipeline-rules.yml'])
      await copyFile(SHIPPED.rules.replace('vllm-rules.yml', name), join(dir, 'prometheus-check', name));
    const result = await runBinary(promtool, ['check', 'config', config]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCESS: 2 rule files found');
    expect(result.stdout).toContain('SUCCESS: 9 rules found'); // vllm-rules.yml
    expect(result.stdout).toContain('SUCCESS: 7 rules found'); // pipeline-rules.yml
  });
});

describe('infra/alertmanager/alertmanager.example.yml', () => {
  interface Example {
    route: { receiver: string; group_by: string[] };
    receivers: { name: string; webhook_configs: Record<string, unknown>[] }[];
  }

  it('passes amtool check-config with its token file present', async () => {
    // Check a byte-identical copy whose credentials_file points at a real file, so the
    // check does not depend on /etc/alertmanager existing on the test machine.
    const tokenFile = join(dir, 'llm-alert-pipeline.token');
    await writeFile(tokenFile, 'a-test-token-of-32-characters-xx');
    const shipped = await readFile(SHIPPED.alertmanagerConfig, 'utf8');
    const copy = shipped.replace('/etc/alertmanager/llm-alert-pipeline.token', tokenFile);
    expect(copy).not.toBe(shipped);
    await writeFile(join(dir, 'alertmanager.yml'), copy);
    const result = await runBinary(amtool, ['check-config', join(dir, 'alertmanager.yml')]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCESS');
    expect(result.stdout).toContain('1 inhibit rules');
  });

  it('sends everything to the llm-alert-pipeline webhook with resolved alerts and a bearer token file', async () => {
    const doc = parse(await readFile(SHIPPED.alertmanagerConfig, 'utf8')) as Example;
    expect(doc.route).toMatchObject({ receiver: 'llm-alert-pipeline', group_by: ['alertname', 'model_name'] });
    expect(doc.receivers.map((r) => r.name)).toEqual(['llm-alert-pipeline', 'llm-alert-pipeline-ops']);
    expect(doc.receivers[0]?.webhook_configs).toEqual([
      {
        url: expect.stringMatching(/^http:\/\/[^/]+:8080\/v1\/alertmanager$/),
        send_resolved: true,
        max_alerts: expect.any(Number),
        http_config: {
          authorization: { type: 'Bearer', credentials_file: '/etc/alertmanager/llm-alert-pipeline.token' },
        },
      },
    ]);
  });

  it('caps alerts per notification so a storm fits the accepted body (a 413 is dropped by Alertmanager)', async () => {
    const doc = parse(await readFile(SHIPPED.alertmanagerConfig, 'utf8')) as Example;
    const maxAlerts = doc.receivers[0]!.webhook_configs[0]!.max_alerts as number;
    expect(maxAlerts).toBeGreaterThan(50); // above every digestAbove default, so storms still get a digest
    // A kube-prometheus-sized alert is ~1 KiB; leave room for 5 KiB of labels and annotations each.
    expect(maxAlerts * 5 * 1024).toBeLessThan(MAX_BODY_BYTES);
  });

  it('routes the Watchdog heartbeat to llm-alert-pipeline on its own route, repeated well within the heartbeat timeout', async () => {
    const result = await runBinary(amtool, [
      'config',
      'routes',
      'test',
      `--config.file=${SHIPPED.alertmanagerConfig}`,
      'alertname=Watchdog',
      'severity=none',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('llm-alert-pipeline');
    const doc = parse(await readFile(SHIPPED.alertmanagerConfig, 'utf8')) as {
      route: { routes: Record<string, unknown>[] };
    };
    expect(doc.route.routes).toContainEqual(
      expect.objectContaining({
        matchers: ['alertname="Watchdog"'],
        receiver: 'llm-alert-pipeline',
        repeat_interval: '1m',
      }),
    );
  });

  it("routes the pipeline's own alerts around it, to the ops receiver (every rule of pipeline-rules.yml but Watchdog)", async () => {
    const rules = parse(await readFile(SHIPPED.rules.replace('vllm-rules.yml', 'pipeline-rules.yml'), 'utf8')) as {
      groups: { rules: { alert?: string; labels?: Record<string, string> }[] }[];
    };
    const own = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert && r.alert !== 'Watchdog');
    expect(own.length).toBeGreaterThan(3);
    for (const rule of own) {
      const labels = Object.entries({ ...rule.labels, alertname: rule.alert }).map(([k, v]) => `${k}=${v}`);
      const result = await runBinary(amtool, [
        'config',
        'routes',
        'test',
        `--config.file=${SHIPPED.alertmanagerConfig}`,
        ...labels,
      ]);
      expect(result.stdout.trim(), rule.alert).toBe('llm-alert-pipeline-ops');
    }
    const doc = parse(await readFile(SHIPPED.alertmanagerConfig, 'utf8')) as {
      receivers: { name: string; webhook_configs?: unknown[]; slack_configs?: { send_resolved?: boolean }[] }[];
    };
    const ops = doc.receivers.find((r) => r.name === 'llm-alert-pipeline-ops')!;
    expect(ops.webhook_configs).toBeUndefined();
    expect(ops.slack_configs?.[0]?.send_resolved).toBe(true);
  });

  it('routes a vLLM alert to llm-alert-pipeline (amtool config routes test)', async () => {
    const result = await runBinary(amtool, [
      'config',
      'routes',
      'test',
      `--config.file=${SHIPPED.alertmanagerConfig}`,
      'alertname=VLLMQueueBacklog',
      'model_name=qwen3-8b',
      'severity=warning',
      'kind=queue',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('llm-alert-pipeline');
  });
});
