/**
 * The enrichment stage against a loopback server replaying Prometheus 2.42's recorded answers
 * (test/fixtures/prometheus/recorded, made by record.ts). Each test asserts the exact requests sent.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { enrichAlerts, type EnrichDeps } from '../../shared/enrich/index.js';
import { ENRICHERS } from '../../shared/enrich/kinds/index.js';
import type { Enrichment, Signal } from '../../shared/enrich/types.js';
import { createLogger, silentLogger } from '../../shared/core/logger.js';
import * as alerts from '../fixtures/prometheus/alerts.js';
import {
  close,
  listen,
  loadExchanges,
  requestKey,
  startReplayServer,
  type ReplayServer,
} from '../fixtures/prometheus/exchanges.js';
import { FLEET_END, GPU_CAPACITY_MIB, LEAK_MIB_PER_HOUR } from '../fixtures/prometheus/fleet.js';
import * as scenario from '../fixtures/prometheus/scenario-alerts.js';
import { SCENARIO_END } from '../fixtures/prometheus/scenarios.js';

const servers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const deps = (prometheusUrl: string | undefined, extra: Partial<EnrichDeps> = {}): EnrichDeps => ({
  prometheusUrl,
  timeoutMs: 10_000,
  queryTimeoutMs: 5000,
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

/**
 * Enriches `group` against the recording `name` and checks every recorded request was sent exactly
 * once, and nothing else (`allSent: false`: only that nothing else was sent, for a group whose
 * remaining queries are cancelled when one fails).
 */
async function enrichAgainst(
  name: string,
  group: Alert[],
  extra: Partial<EnrichDeps> = {},
  allSent = true,
): Promise<Map<string, Enrichment>> {
  const server = await replay(name);
  const result = await enrichAlerts(group, deps(server.url, extra));
  const recorded = loadExchanges(name);
  const sent = server.received.map((r) => requestKey(r.path, r.params)).sort();
  const keys = recorded.map((e) => requestKey(e.path, e.params)).sort();
  if (allSent) expect(sent).toEqual(keys);
  else expect(keys).toEqual(expect.arrayContaining(sent));
  expect(new Set(sent).size).toBe(sent.length);
  const methods = new Map(recorded.map((e) => [requestKey(e.path, e.params), e.method]));
  for (const r of server.received) expect(r.method).toBe(methods.get(requestKey(r.path, r.params)));
  return result;
}

function signals(result: Map<string, Enrichment>, fingerprint: string): Record<string, Signal> {
  const enrichment = result.get(fingerprint);
  if (enrichment?.status !== 'enriched') throw new Error(`not enriched: ${JSON.stringify(enrichment)}`);
  return Object.fromEntries(enrichment.signals.map((s) => [s.name, s]));
}

function enriched(result: Map<string, Enrichment>, fingerprint: string): Extract<Enrichment, { status: 'enriched' }> {
  const enrichment = result.get(fingerprint);
  if (enrichment?.status !== 'enriched') throw new Error(`not enriched: ${JSON.stringify(enrichment)}`);
  return enrichment;
}

describe('enrichAlerts per kind', () => {
  it('kv_cache: usage ratio from either metric generation, preemptions/s, running, waiting; values when fired', async () => {
    const [alert] = alerts.webhookAlerts('firing-kv-cache-critical');
    const result = await enrichAgainst('kv-cache', [alert!]);
    const s = signals(result, alert!.fingerprint);
    expect(s.kv_cache_usage_ratio).toMatchObject({ value: 0.97, atStart: 0.97, unit: 'ratio' });
    expect(s.kv_cache_usage_ratio!.query).toBe(
      'max by (model_name, instance, job) (vllm:kv_cache_usage_perc{model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm",model_name!=""} or vllm:gpu_cache_usage_perc{model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm",model_name!=""})',
    );
    expect(s.preemptions_per_second).toMatchObject({ value: 0.5, unit: 'per_second' });
    expect(s.requests_running).toMatchObject({ value: 12, unit: 'count' });
    expect(s.requests_waiting!.value).toBe(80);
    expect(enriched(result, alert!.fingerprint).likelyCause).toMatchObject({
      rule: 'kv_cache_pressure',
      evidence: ['KV cache usage 97% (≥ 90%)', 'Preemptions 0.5/s (> 0/s)'],
    });
  });

  it('queue: one query per signal for the group, each alert matched to its own model', async () => {
    const [llama, qwen] = alerts.webhookAlerts('firing-queue-backlog-two-models');
    const result = await enrichAgainst('queue', [llama!, qwen!]);
    // Asked once for the group (the recorded exchange holds the group's query, model_name=~"llama…|qwen…");
    // each alert keeps and shows its own.
    expect(signals(result, llama!.fingerprint).requests_waiting).toMatchObject({
      value: 85,
      query: 'sum by (model_name) (vllm:num_requests_waiting{model_name="llama-3.1-70b",model_name!=""})',
    });
    expect(signals(result, qwen!.fingerprint).requests_waiting!.query).toBe(
      'sum by (model_name) (vllm:num_requests_waiting{model_name="qwen3-8b",model_name!=""})',
    );
    expect(signals(result, llama!.fingerprint).requests_running!.value).toBe(30);
    expect(signals(result, qwen!.fingerprint).requests_waiting!.value).toBe(80);
    expect(signals(result, qwen!.fingerprint).requests_running!.value).toBe(12);
    expect(signals(result, qwen!.fingerprint).generation_tokens_per_second!.value).toBeNull();
  });

  it('resolved alerts are enriched too', async () => {
    const resolved = alerts.webhookAlerts('resolved-queue-backlog-two-models');
    const result = await enrichAgainst('queue', resolved);
    expect([...result.values()].map((e) => e.status)).toEqual(['enriched', 'enriched']);
  });

  it('gpu_memory: used and total MiB, and the robust leak trend over the window with its sparkline', async () => {
    const [alert] = alerts.webhookAlerts('firing-gpu-memory-leak');
    const result = await enrichAgainst('gpu-memory', [alert!]);
    const { signals: values, trend, likelyCause } = enriched(result, alert!.fingerprint);
    expect(values.map((v) => [v.name, v.value])).toEqual([
      ['gpu_memory_used_mib', 24_200],
      ['gpu_memory_total_mib', GPU_CAPACITY_MIB],
    ]);
    expect(trend).toMatchObject({
      usedMiB: 24_200,
      capacityMiB: GPU_CAPACITY_MIB,
      windowSeconds: 6 * 3600,
      points: 361,
      method: 'theil-sen',
      growing: true,
      series: 'DCGM_FI_DEV_FB_USED',
    });
    expect(trend!.growthMiBPerHour).toBeCloseTo(LEAK_MIB_PER_HOUR, 6);
    expect(trend!.rSquared).toBeCloseTo(1, 6);
    expect(trend!.hoursToFull).toBeCloseTo((GPU_CAPACITY_MIB - 24_200) / LEAK_MIB_PER_HOUR, 4);
    expect(trend!.sparkline).toBe('▁▁▂▂▂▃▃▃▃▄▄▄▅▅▅▆▆▆▆▇▇▇██');
    expect(likelyCause?.rule).toBe('memory_leak');
  });

  it('gpu_memory: a configured capacity overrides used + free', async () => {
    const [alert] = alerts.webhookAlerts('firing-gpu-memory-leak');
    const result = await enrichAgainst('gpu-memory', [alert!], { gpuMemoryCapacityMiB: 30_200 });
    expect(enriched(result, alert!.fingerprint).trend?.capacityMiB).toBe(30_200);
    expect(enriched(result, alert!.fingerprint).trend?.hoursToFull).toBeCloseTo(10, 4);
  });

  it('latency: TTFT quantiles in seconds with their top bucket; NaN named as no requests; no data stays null', async () => {
    const result = await enrichAgainst('latency', [alerts.latencyAlert, alerts.idleLatencyAlert]);
    const busy = signals(result, alerts.latencyAlert.fingerprint);
    expect(busy.ttft_p50_seconds).toMatchObject({
      value: 1.4615384615384615,
      unit: 'seconds',
      topBucket: 5,
      nanMeans: 'no_requests',
    });
    expect(busy.ttft_p95_seconds!.value).toBeCloseTo(2.5, 9);
    expect(busy.ttft_p99_seconds!.value).toBeCloseTo(4.5, 9);
    expect(busy.requests_waiting!.value).toBe(85);
    expect(busy.itl_p95_seconds!.value).toBeNull();
    expect(busy.prompt_tokens_mean!.value).toBeNull();
    const idle = signals(result, alerts.idleLatencyAlert.fingerprint);
    expect(idle.ttft_p95_seconds!.value).toBeNaN();
    expect(idle.requests_waiting!.value).toBe(80);
    expect(enriched(result, alerts.latencyAlert.fingerprint).likelyCause?.rule).toBe('queueing');
  });

  it('error_rate: 5xx share, vLLM failures, finished requests/s by finished_reason, and never the false-zero aborted share', async () => {
    const result = await enrichAgainst('error-rate', [alerts.errorRateAlert]);
    const s = signals(result, alerts.errorRateAlert.fingerprint);
    expect(s.http_5xx_ratio).toMatchObject({ value: 0.1, unit: 'ratio' });
    expect(s.failed_per_second).toMatchObject({ value: 0.5, atStart: 0.5, unit: 'per_second' });
    expect(s.failed_ratio!.value).toBeCloseTo(0.5 / 3.5, 9);
    // V1 creates finished_reason="abort" at 0 and never increments it: no signal may show it as 0.
    expect(Object.keys(s).filter((name) => name.includes('abort'))).toEqual([]);
    expect(s['finished_per_second:error']).toMatchObject({
      label: 'Finished (error)',
      value: 0.5,
      atStart: 0.5,
      unit: 'per_second',
    });
    expect(s['finished_per_second:stop']!.value).toBe(3);
    expect(enriched(result, alerts.errorRateAlert.fingerprint).likelyCause).toBeUndefined();
  });

  it('unknown: the rule expression without its threshold, scoped to the alert labels; +Inf kept', async () => {
    const result = await enrichAgainst('unknown', [alerts.unknownAlert, alerts.infiniteAlert]);
    expect(signals(result, alerts.unknownAlert.fingerprint).expression_value).toEqual({
      name: 'expression_value',
      label: 'Rule expression',
      value: 12,
      atStart: 12,
      unit: 'none',
      query: 'vllm:num_requests_running{model_name="qwen3-8b",instance="127.0.0.1:9800",job="vllm"}',
    });
    expect(signals(result, alerts.infiniteAlert.fingerprint).expression_value!.value).toBe(Number.POSITIVE_INFINITY);
  });

  it('an empty result is no data (null), never 0, and gives no cause', async () => {
    const result = await enrichAgainst('no-data', [alerts.noDataAlert]);
    const s = signals(result, alerts.noDataAlert.fingerprint);
    expect(s.requests_waiting).toMatchObject({ value: null, atStart: null });
    expect(s.requests_running!.value).toBeNull();
    expect(enriched(result, alerts.noDataAlert.fingerprint).likelyCause).toBeUndefined();
  });
});

describe('the six scenarios, replayed from their recording', () => {
  const causes = (result: Map<string, Enrichment>, group: Alert[]) =>
    group.map((a) => enriched(result, a.fingerprint).likelyCause?.rule ?? 'none');

  it('latency group (V0 and V1 names, different start times): queueing, prefill-bound, and silence on an idle model', async () => {
    const group = Object.values(scenario.latencyGroup);
    expect(causes(await enrichAgainst('scenario-latency', group, { now: () => SCENARIO_END }), group)).toEqual([
      'queueing',
      'prefill_bound',
      'none',
    ]);
  });

  it('KV-cache pressure', async () => {
    expect(
      causes(await enrichAgainst('scenario-kv-cache', [scenario.kvAlert], { now: () => SCENARIO_END }), [
        scenario.kvAlert,
      ]),
    ).toEqual(['kv_cache_pressure']);
  });

  it('GPU group: leak, flat, leak since a restart, sawtooth', async () => {
    const result = await enrichAgainst('scenario-gpu-memory', scenario.gpuGroup, { now: () => SCENARIO_END });
    expect(causes(result, scenario.gpuGroup)).toEqual(['memory_leak', 'none', 'memory_leak', 'none']);
    expect(enriched(result, scenario.gpuGroup[2]!.fingerprint).trend?.restartedAt).toBe('2026-11-29T10:16:00.000Z');
  });
});

describe('enrichAlerts when Prometheus fails', () => {
  it('an API error body makes the alert unavailable with the error in the reason', async () => {
    const result = await enrichAgainst('bad-expression', [alerts.badExpressionAlert], {}, false);
    expect(result.get(alerts.badExpressionAlert.fingerprint)).toEqual({
      status: 'unavailable',
      kind: 'unknown',
      reason:
        'Prometheus error (HTTP 400, bad_data): invalid parameter "query": 1:30: parse error: unclosed left parenthesis',
      reasonZh:
        'Prometheus 返回错误（HTTP 400，bad_data）：invalid parameter "query": 1:30: parse error: unclosed left parenthesis',
      cause: 'prometheus_error',
    });
  });

  it('one alert that cannot be enriched does not hold back the rest of the group', async () => {
    const [alert] = alerts.webhookAlerts('firing-kv-cache-critical');
    const bare = {
      ...alerts.ruleAlert({ alertname: 'InstanceDown', severity: 'critical' }, 'up == 0', 'd0d0d0d0d0d0d0d0'),
      generatorURL: '',
    };
    const result = await enrichAgainst('kv-cache', [alert!, bare]);
    expect(result.get(alert!.fingerprint)?.status).toBe('enriched');
    expect(result.get(bare.fingerprint)).toEqual({
      status: 'unavailable',
      kind: 'unknown',
      reason: 'the alert carries no rule expression (generatorURL g0.expr)',
      reasonZh: '告警没有带规则表达式（generatorURL 的 g0.expr）',
      cause: 'no_query',
    });
  });

  it('a server that never answers: every alert unavailable once the budget is spent', async () => {
    const server = createServer(() => {});
    const url = await listen(server);
    servers.push({ close: () => close(server) });
    const group = alerts.webhookAlerts('firing-queue-backlog-two-models');
    const result = await enrichAlerts(group, deps(url, { timeoutMs: 300 }));
    const timedOut = {
      status: 'unavailable',
      kind: 'queue',
      reason: 'Prometheus did not answer within 300 ms',
      reasonZh: 'Prometheus 300 ms 内没有响应',
      cause: 'timeout',
    };
    expect([...result.values()]).toEqual([timedOut, timedOut]);
  });

  it('a budget spent on our own work, every query answered, does not blame Prometheus', async () => {
    // Prometheus answers at once (no series); the enricher then works past the budget on the CPU, as a
    // storm's thousands of alerts do, and after that waits on something that is not Prometheus.
    const server = createServer((req, res) => {
      const range = req.url?.includes('query_range');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'success', data: { resultType: range ? 'matrix' : 'vector', result: [] } }));
    });
    const url = await listen(server);
    servers.push({ close: () => close(server) });
    const original = ENRICHERS.queue.enrich;
    // The budget is long enough for loopback answers on a loaded machine; the CPU work outlasts it.
    const budgetMs = 1000;
    let started = 0;
    const spy = vi.spyOn(ENRICHERS.queue, 'enrich').mockImplementation(async (alert, ctx) => {
      const read = await original.call(ENRICHERS.queue, alert, ctx);
      while (Date.now() < started + budgetMs + 100); // busy: the budget runs out here
      await new Promise((r) => setTimeout(r, 50));
      return read;
    });
    try {
      const [alert] = alerts.webhookAlerts('firing-queue-backlog-two-models');
      started = Date.now();
      const result = await enrichAlerts([alert!], deps(url, { timeoutMs: budgetMs }));
      expect(result.get(alert!.fingerprint)).toEqual({
        status: 'unavailable',
        kind: 'queue',
        reason: 'enrichment did not finish within 1 s (Prometheus had answered; this process was busy)',
        reasonZh: '1 s 内没查完（Prometheus 已经返回，是本服务太忙）',
        cause: 'timeout',
      });
    } finally {
      spy.mockRestore();
    }
  });

  it('a budget spent on our own work while a query was still open does not blame Prometheus either', async () => {
    // Prometheus answers at once, but the enricher works on the CPU past the budget right after the
    // batch is handed to the client, before the answer can be read (a storm's CPU with requests out):
    // a request is open when the budget ends, yet Prometheus never had the time it is blamed for.
    let asked = 0;
    const server = createServer((req, res) => {
      asked++;
      const range = req.url?.includes('query_range');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 'success', data: { resultType: range ? 'matrix' : 'vector', result: [] } }));
    });
    const url = await listen(server);
    servers.push({ close: () => close(server) });
    const original = ENRICHERS.queue.enrich;
    const spy = vi.spyOn(ENRICHERS.queue, 'enrich').mockImplementation(async (alert, ctx) => {
      const read = original.call(ENRICHERS.queue, alert, ctx);
      await new Promise((r) => setImmediate(r)); // the batch goes to the client
      const until = Date.now() + 300;
      while (Date.now() < until); // busy: the 100 ms budget runs out here
      return read;
    });
    try {
      const [alert] = alerts.webhookAlerts('firing-queue-backlog-two-models');
      const result = await enrichAlerts([alert!], deps(url, { timeoutMs: 100 }));
      expect(result.get(alert!.fingerprint)).toEqual({
        status: 'unavailable',
        kind: 'queue',
        reason:
          'enrichment did not finish within 100 ms (this process was busy; a request to Prometheus was still open)',
        reasonZh: '100 ms 内没查完（本服务太忙，还有一个 Prometheus 请求没返回）',
        cause: 'timeout',
      });
      expect(asked).toBe(0); // Prometheus never even had the request
    } finally {
      spy.mockRestore();
    }
  });

  it('connection refused: unavailable, naming the error', async () => {
    const url = await closedPortUrl();
    const [alert] = alerts.webhookAlerts('firing-kv-cache-critical');
    const result = await enrichAlerts([alert!], deps(url));
    expect(result.get(alert!.fingerprint)).toEqual({
      status: 'unavailable',
      kind: 'kv_cache',
      reason: 'Prometheus unreachable (ECONNREFUSED)',
      reasonZh: '连不上 Prometheus（ECONNREFUSED）',
      cause: 'network',
    });
  });

  it('PROMETHEUS_URL unset: unavailable without any request', async () => {
    const [alert] = alerts.webhookAlerts('firing-gpu-memory-leak');
    const result = await enrichAlerts([alert!], deps(undefined));
    expect(result.get(alert!.fingerprint)).toEqual({
      status: 'unavailable',
      kind: 'gpu_memory',
      reason: 'PROMETHEUS_URL not set',
      reasonZh: '未设置 PROMETHEUS_URL',
      cause: 'not_configured',
    });
  });
});

describe('enrichAlerts query economy', () => {
  it('identical queries of one group are sent once, and the count per group and kind is logged', async () => {
    const [alert] = alerts.webhookAlerts('firing-kv-cache-critical');
    const twin = { ...alert!, fingerprint: 'twin000000000000' };
    const lines: string[] = [];
    const logger = createLogger('debug', (line) => lines.push(line));
    const result = await enrichAgainst('kv-cache', [alert!, twin], { logger });
    expect(result.get(twin.fingerprint)).toEqual(result.get(alert!.fingerprint));
    const done = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === 'enrich.done');
    // 4 vLLM signals and GPU utilization (DCGM matched by host), each now and when fired, and the servers' lookup.
    expect(done).toMatchObject({ level: 'debug', alerts: 2, queries: 11, queriesByKind: { kv_cache: 11 } });
  });
});

/** A loopback URL on which nothing listens (a port just released). */
async function closedPortUrl(): Promise<string> {
  const server: Server = createServer();
  const url = await listen(server);
  await close(server);
  return url;
}
