/**
 * The enrichment stage against a loopback server replaying Prometheus 2.42's recorded answers
 * (test/fixtures/prometheus/recorded, made by record.ts). Each test asserts the exact requests sent.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { enrichAlerts, type EnrichDeps } from '../../shared/enrich/index.js';
import type { Enrichment, Signal } from '../../shared/enrich/types.js';
import { createLogger, silentLogger } from '../../shared/logger.js';
import * as alerts from '../fixtures/prometheus/alerts.js';
import { close, listen, loadExchanges, requestKey, startReplayServer, type ReplayServer } from '../fixtures/prometheus/exchanges.js';
import { FLEET_END, GPU_CAPACITY_MIB, LEAK_MIB_PER_HOUR } from '../fixtures/prometheus/fleet.js';

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const deps = (prometheusUrl: string | undefined, extra: Partial<EnrichDeps> = {}): EnrichDeps => ({
  prometheusUrl,
  timeoutMs: 5000,
  memoryTrendWindowHours: 6,
  logger: silentLogger,
  now: () => FLEET_END,
  ...extra,
});

async function replay(name: string): Promise<ReplayServer> {
  const server = await startReplayServer(loadExchanges(name));
  servers.push(server);
  return server;
}

/** Enriches `group` against the recording `name` and checks every recorded request was sent exactly once, and nothing else. */
async function enrichAgainst(name: string, group: Alert[], extra: Partial<EnrichDeps> = {}): Promise<Map<string, Enrichment>> {
  const server = await replay(name);
  const result = await enrichAlerts(group, deps(server.url, extra));
  const expected = loadExchanges(name).map((e) => requestKey(e.path, e.params)).sort();
  expect(server.received.map((r) => requestKey(r.path, r.params)).sort()).toEqual(expected);
  for (const r of server.received) {
    expect(r.method).toBe('POST');
    expect(r.contentType).toBe('application/x-www-form-urlencoded');
  }
  return result;
}

function signals(result: Map<string, Enrichment>, fingerprint: string): Record<string, Signal> {
  const enrichment = result.get(fingerprint);
  if (enrichment?.status !== 'enriched') throw new Error(`not enriched: ${JSON.stringify(enrichment)}`);
  return Object.fromEntries(enrichment.signals.map((s) => [s.name, s]));
}

describe('enrichAlerts per kind', () => {
  it('kv_cache: usage ratio from either metric generation, preemptions/s, running', async () => {
    const [alert] = alerts.webhookAlerts('firing-kv-cache-critical');
    const s = signals(await enrichAgainst('kv-cache', [alert!]), alert!.fingerprint);
    expect(s.kv_cache_usage_ratio).toMatchObject({ value: 0.97, unit: 'ratio' });
    expect(s.kv_cache_usage_ratio!.query).toBe(
      'max(vllm:kv_cache_usage_perc{model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm"} or vllm:gpu_cache_usage_perc{model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm"})',
    );
    expect(s.preemptions_per_second).toMatchObject({ value: 0.5, unit: 'per_second' });
    expect(s.requests_running).toMatchObject({ value: 12, unit: 'count' });
  });

  it('queue: each alert of the group is scoped to its own model', async () => {
    const [llama, qwen] = alerts.webhookAlerts('firing-queue-backlog-two-models');
    const result = await enrichAgainst('queue', [llama!, qwen!]);
    expect(signals(result, llama!.fingerprint).requests_waiting).toMatchObject({ value: 85, query: 'sum(vllm:num_requests_waiting{model_name="llama-3.1-70b"})' });
    expect(signals(result, llama!.fingerprint).requests_running!.value).toBe(30);
    expect(signals(result, qwen!.fingerprint).requests_waiting!.value).toBe(80);
    expect(signals(result, qwen!.fingerprint).requests_running!.value).toBe(12);
  });

  it('resolved alerts are enriched too', async () => {
    const resolved = alerts.webhookAlerts('resolved-queue-backlog-two-models');
    const result = await enrichAgainst('queue', resolved);
    expect([...result.values()].map((e) => e.status)).toEqual(['enriched', 'enriched']);
  });

  it('gpu_memory: used and free MiB, and the leak trend over the window', async () => {
    const [alert] = alerts.webhookAlerts('firing-gpu-memory-leak');
    const result = await enrichAgainst('gpu-memory', [alert!]);
    const enrichment = result.get(alert!.fingerprint);
    expect(enrichment).toMatchObject({ status: 'enriched', kind: 'gpu_memory' });
    expect(signals(result, alert!.fingerprint).gpu_memory_used_mib).toMatchObject({ value: 24_200, unit: 'mebibytes' });
    expect(signals(result, alert!.fingerprint).gpu_memory_free_mib!.value).toBe(57_359);
    const trend = enrichment?.status === 'enriched' ? enrichment.trend : undefined;
    expect(trend).toMatchObject({ usedMiB: 24_200, capacityMiB: GPU_CAPACITY_MIB, windowSeconds: 6 * 3600, points: 361 });
    expect(trend!.growthMiBPerHour).toBeCloseTo(LEAK_MIB_PER_HOUR, 6);
    expect(trend!.rSquared).toBeCloseTo(1, 9);
    expect(trend!.hoursToFull).toBeCloseTo((GPU_CAPACITY_MIB - 24_200) / LEAK_MIB_PER_HOUR, 6);
  });

  it('gpu_memory: a configured capacity overrides used + free', async () => {
    const [alert] = alerts.webhookAlerts('firing-gpu-memory-leak');
    const result = await enrichAgainst('gpu-memory', [alert!], { gpuMemoryCapacityMiB: 30_200 });
    const enrichment = result.get(alert!.fingerprint);
    const trend = enrichment?.status === 'enriched' ? enrichment.trend : undefined;
    expect(trend?.capacityMiB).toBe(30_200);
    expect(trend?.hoursToFull).toBeCloseTo(10, 6);
  });

  it('latency: TTFT quantiles in seconds; NaN (no first tokens in the window) stays NaN', async () => {
    const result = await enrichAgainst('latency', [alerts.latencyAlert, alerts.idleLatencyAlert]);
    const busy = signals(result, alerts.latencyAlert.fingerprint);
    expect(busy.ttft_p50_seconds).toMatchObject({ value: 1.4615384615384615, unit: 'seconds' });
    expect(busy.ttft_p95_seconds!.value).toBeCloseTo(2.5, 9);
    expect(busy.ttft_p99_seconds!.value).toBeCloseTo(4.5, 9);
    expect(busy.requests_waiting!.value).toBe(85);
    const idle = signals(result, alerts.idleLatencyAlert.fingerprint);
    expect(idle.ttft_p95_seconds!.value).toBeNaN();
    expect(idle.requests_waiting!.value).toBe(80);
  });

  it('error_rate: 5xx share of HTTP requests and aborted requests per second', async () => {
    const result = await enrichAgainst('error-rate', [alerts.errorRateAlert]);
    const s = signals(result, alerts.errorRateAlert.fingerprint);
    expect(s.http_5xx_ratio).toMatchObject({ value: 0.1, unit: 'ratio' });
    expect(s.aborted_requests_per_second).toMatchObject({ value: 0.2, unit: 'per_second' });
  });

  it('unknown: the rule expression without its threshold, series matched to the alert labels; +Inf kept', async () => {
    const result = await enrichAgainst('unknown', [alerts.unknownAlert, alerts.infiniteAlert]);
    expect(signals(result, alerts.unknownAlert.fingerprint).expression_value).toEqual({
      name: 'expression_value', label: 'Rule expression', value: 12, unit: 'none', query: 'vllm:num_requests_running',
    });
    expect(signals(result, alerts.infiniteAlert.fingerprint).expression_value!.value).toBe(Number.POSITIVE_INFINITY);
  });

  it('an empty result is no data (null), never 0', async () => {
    const result = await enrichAgainst('no-data', [alerts.noDataAlert]);
    const s = signals(result, alerts.noDataAlert.fingerprint);
    expect(s.requests_waiting!.value).toBeNull();
    expect(s.requests_running!.value).toBeNull();
  });
});

describe('enrichAlerts when Prometheus fails', () => {
  it('an API error body makes the alert unavailable with the error in the reason', async () => {
    const result = await enrichAgainst('bad-expression', [alerts.badExpressionAlert]);
    expect(result.get(alerts.badExpressionAlert.fingerprint)).toEqual({
      status: 'unavailable',
      kind: 'unknown',
      reason: 'Prometheus error (HTTP 400, bad_data): invalid parameter "query": 1:30: parse error: unclosed left parenthesis',
    });
  });

  it('one alert that cannot be enriched does not hold back the rest of the group', async () => {
    const [alert] = alerts.webhookAlerts('firing-kv-cache-critical');
    const bare = { ...alerts.ruleAlert({ alertname: 'InstanceDown', severity: 'critical' }, 'up == 0', 'd0d0d0d0d0d0d0d0'), generatorURL: '' };
    const result = await enrichAgainst('kv-cache', [alert!, bare]);
    expect(result.get(alert!.fingerprint)?.status).toBe('enriched');
    expect(result.get(bare.fingerprint)).toEqual({ status: 'unavailable', kind: 'unknown', reason: 'the alert carries no rule expression (generatorURL g0.expr)' });
  });

  it('a server that never answers: every alert unavailable once the budget is spent', async () => {
    const server = createServer(() => {});
    const url = await listen(server);
    servers.push({ close: () => close(server) });
    const group = alerts.webhookAlerts('firing-queue-backlog-two-models');
    const result = await enrichAlerts(group, deps(url, { timeoutMs: 300 }));
    expect([...result.values()]).toEqual([
      { status: 'unavailable', kind: 'queue', reason: 'Prometheus did not answer within 300 ms' },
      { status: 'unavailable', kind: 'queue', reason: 'Prometheus did not answer within 300 ms' },
    ]);
  });

  it('connection refused: unavailable, naming the error', async () => {
    const url = await closedPortUrl();
    const [alert] = alerts.webhookAlerts('firing-kv-cache-critical');
    const result = await enrichAlerts([alert!], deps(url));
    expect(result.get(alert!.fingerprint)).toEqual({ status: 'unavailable', kind: 'kv_cache', reason: 'Prometheus unreachable (ECONNREFUSED)' });
  });

  it('PROMETHEUS_URL unset: unavailable without any request', async () => {
    const [alert] = alerts.webhookAlerts('firing-gpu-memory-leak');
    const result = await enrichAlerts([alert!], deps(undefined));
    expect(result.get(alert!.fingerprint)).toEqual({ status: 'unavailable', kind: 'gpu_memory', reason: 'PROMETHEUS_URL not set' });
  });
});

describe('enrichAlerts query economy', () => {
  it('identical queries of one group are sent once, and the count is logged', async () => {
    const [alert] = alerts.webhookAlerts('firing-kv-cache-critical');
    const twin = { ...alert!, fingerprint: 'twin000000000000' };
    const lines: string[] = [];
    const logger = createLogger('debug', (line) => lines.push(line));
    const result = await enrichAgainst('kv-cache', [alert!, twin], { logger });
    expect(result.get(twin.fingerprint)).toEqual(result.get(alert!.fingerprint));
    const done = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === 'enrich.done');
    expect(done).toMatchObject({ level: 'debug', alerts: 2, queries: 3 });
  });
});

/** A loopback URL on which nothing listens (a port just released). */
async function closedPortUrl(): Promise<string> {
  const server: Server = createServer();
  const url = await listen(server);
  await close(server);
  return url;
}
