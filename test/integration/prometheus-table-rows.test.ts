/**
 * Rows 3–7 of the vLLM troubleshooting table against the real Prometheus binary back-filled
 * (promtool) with `table-scenarios.ts`: for each row, the message names the right evidence and
 * cause where it holds, and stays silent on the twin whose evidence is missing. Also the memory
 * trend's reason for no forecast, and a storm whose digest ranks by value and names the shared cause
 * for the same number of queries as one alert. One Prometheus serves the whole file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { alertLines, PLAIN } from '../../shared/render/content.js';
import { enrichAlerts, type EnrichDeps } from '../../shared/enrich/index.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { createLogger, silentLogger } from '../../shared/core/logger.js';
import { buildNotification } from '../../shared/render/notification.js';
import { renderText } from '../../shared/render/text.js';
import { startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';
import { ruleAlert } from '../fixtures/prometheus/alerts.js';
import {
  type Server,
  serverLabels,
  STORM_REPLICAS,
  stormLabels,
  TABLE_END,
  tableOpenMetrics,
  YOUNG_GPU,
} from '../fixtures/prometheus/table-scenarios.js';

let prometheus: RunningPrometheus;

beforeAll(async () => {
  prometheus = await startPrometheus(tableOpenMetrics());
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
});

const RULES = {
  queue: [
    'VLLMQueueBacklog',
    'queue',
    'sum by (model_name, instance, job, namespace, pod) (vllm:num_requests_waiting) > 5',
  ],
  kv_cache: [
    'VLLMKVCacheNearlyFull',
    'kv_cache',
    'max by (model_name, instance, job, namespace, pod) (vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc) > 0.9',
  ],
  latency: [
    'VLLMTimeToFirstTokenHigh',
    'latency',
    'histogram_quantile(0.95, sum by (le, model_name, instance, job, namespace, pod) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 0.4',
  ],
  error_rate: [
    'VLLMErrorRateHigh',
    'error_rate',
    'sum by (instance, job, namespace, pod) (rate(http_requests_total{status="5xx"}[5m])) > 0',
  ],
} as const;

let serial = 0;
/** A firing alert of the shipped rule for `kind` on `labels`, fired 20 minutes before the end of the data. */
function alertOn(kind: keyof typeof RULES, labels: Record<string, string>): Alert {
  const [alertname, kindLabel, expr] = RULES[kind];
  serial += 1;
  const alert = ruleAlert(
    { alertname, kind: kindLabel, severity: 'warning', ...labels },
    expr,
    `e0e0${String(serial).padStart(12, '0')}`,
  );
  return { ...alert, startsAt: new Date(TABLE_END.getTime() - 20 * 60_000).toISOString() };
}
const on = (kind: keyof typeof RULES, server: Server) => alertOn(kind, serverLabels(server));

async function enrich(alerts: Alert[], extra: Partial<EnrichDeps> = {}): Promise<Map<string, Enrichment>> {
  return enrichAlerts(alerts, {
    prometheusUrl: prometheus.url,
    timeoutMs: 20_000,
    memoryTrendWindowHours: 1,
    logger: silentLogger,
    now: () => TABLE_END,
    ...extra,
  });
}

/** The alert's enrichment (it must be enriched) and its message as plain text. */
async function message(alert: Alert): Promise<{ e: Extract<Enrichment, { status: 'enriched' }>; text: string }> {
  const e = (await enrich([alert])).get(alert.fingerprint);
  if (e?.status !== 'enriched') throw new Error(`not enriched: ${JSON.stringify(e)}`);
  return { e, text: alertLines({ ...alert, enrichment: e }, PLAIN).join('\n') };
}

describe('row 3 — GPU busy, throughput flat → decode-bound', () => {
  it('names decode-bound with GPU utilization, flat tokens/s since fired and the time per output token', async () => {
    const { e, text } = await message(on('queue', 'decode'));
    expect(e.likelyCause?.rule).toBe('decode_bound');
    expect(e.likelyCause?.evidence[0]).toBe('GPU utilization 97% (≥ 90%)');
    expect(e.likelyCause?.evidence[1]).toMatch(/^Generation tokens 1,500\/s → 1,500\/s since fired \(×1, ≤ ×1\.1\)$/);
    expect(e.likelyCause?.evidence[2]).toBe('Time per output token (mean) 80 ms (≥ 50 ms)');
    expect(text).toContain('Likely cause: Decode-bound');
    expect(text).toContain('Try: Batch more per step');
  });

  it('without DCGM data for its pod: GPU utilization "no data", decode-bound silent (queueing speaks)', async () => {
    const { e, text } = await message(on('queue', 'decodeTwin'));
    expect(e.signals.find((s) => s.name === 'gpu_utilization_ratio')?.value).toBeNull();
    expect(e.likelyCause?.rule).toBe('queueing');
    expect(text).not.toContain('Decode-bound');
  });
});

describe('row 4 — GPU idle, memory full → memory-bound', () => {
  it('names memory-bound with GPU utilization, KV-cache usage and requests running', async () => {
    const { e, text } = await message(on('kv_cache', 'memory'));
    expect(e.likelyCause).toMatchObject({
      rule: 'memory_bound',
      evidence: ['GPU utilization 25% (< 50%)', 'KV cache usage 98% (≥ 90%)', 'Requests running 6 (≥ 1)'],
    });
    expect(text).toContain('Likely cause: Memory-bound');
    expect(text).toContain('--max-model-len');
  });

  it('without DCGM data: no cause (no preemptions either, so KV-cache pressure is silent too)', async () => {
    const { e, text } = await message(on('kv_cache', 'memoryTwin'));
    expect(e.likelyCause).toBeUndefined();
    expect(text).not.toContain('Likely cause');
  });
});

describe('row 5 — GPU idle, few requests running → concurrency too low', () => {
  it('names low concurrency with GPU utilization, one request running, none waiting', async () => {
    const { e, text } = await message(on('latency', 'lowConcurrency'));
    expect(e.likelyCause).toMatchObject({
      rule: 'low_concurrency',
      evidence: [
        'GPU utilization 10% (< 50%)',
        'Requests running 1 (≤ 2)',
        'Requests waiting 0 (< 1)',
        'Generation tokens 40/s (> 0/s)',
      ],
    });
    expect(text).toContain('Likely cause: Concurrency too low');
  });

  it('without DCGM data: silent', async () => {
    const { e } = await message(on('latency', 'lowConcurrencyTwin'));
    expect(e.likelyCause).toBeUndefined();
  });
});

describe('row 6 — an occasional request very slow → preemption re-prefill', () => {
  it('names the end-to-end tail against the median and the preemption rate', async () => {
    const { e, text } = await message(on('latency', 'tail'));
    expect(e.signals.find((s) => s.name === 'e2e_p50_seconds')?.value).toBeCloseTo(2, 1);
    expect(e.signals.find((s) => s.name === 'e2e_p99_seconds')?.value).toBeCloseTo(28, 1);
    expect(e.likelyCause?.rule).toBe('preemption_reprefill');
    expect(e.likelyCause?.evidence[0]).toMatch(
      /^End-to-end latency p99 28\.0 s = 1[34](\.\d+)?× End-to-end latency p50 2\.00 s \(≥ 5×\)$/,
    );
    expect(e.likelyCause?.evidence[1]).toMatch(/^Preemptions 0\.2\/s \(> 0\/s\)$/);
    expect(text).toContain('Likely cause: Preemption re-prefill');
  });

  it('without an end-to-end histogram: the quantiles read no data, on the line of what the server does not expose, and the rule is silent', async () => {
    const { e, text } = await message(on('latency', 'tailTwin'));
    expect(e.signals.find((s) => s.name === 'e2e_p99_seconds')?.value).toBeNull();
    expect(e.likelyCause).toBeUndefined();
    expect(text).toMatch(/signals not exposed by this server: [^\n]*End-to-end latency p99/);
    expect(text).not.toContain('End-to-end latency p99: no data');
  });
});

describe('row 7 — success rate low → out of memory, context length, input validation', () => {
  it('out of memory: 5xx share with the GPU memory of its pod 98% used, beyond the 90% it was configured to take', async () => {
    const { e, text } = await message(on('error_rate', 'oom'));
    expect(e.likelyCause).toMatchObject({
      rule: 'out_of_memory',
      evidence: [
        'HTTP 5xx share 20% (> 0%)',
        'GPU memory used 98.1% = 1.09× GPU memory share configured 90% (≥ 1.02×)',
      ],
    });
    expect(text).toContain('Likely cause: Out of memory');
  });

  it('the same failures without DCGM data: silent', async () => {
    const { e, text } = await message(on('error_rate', 'oomTwin'));
    expect(e.signals.find((s) => s.name === 'http_5xx_ratio')?.value).toBeCloseTo(0.2, 6);
    expect(e.signals.find((s) => s.name === 'gpu_memory_used_ratio')?.value).toBeNull();
    expect(e.likelyCause).toBeUndefined();
    expect(text).not.toContain('Likely cause');
  });

  it('context length exceeded: 40% of finished requests capped by length', async () => {
    const { e, text } = await message(on('error_rate', 'length'));
    expect(e.likelyCause).toMatchObject({
      rule: 'context_length_exceeded',
      evidence: ['Length-capped share 40% (≥ 25%)'],
    });
    expect(text).toContain('Likely cause: Context length exceeded');
  });

  it('input validation: 30% of HTTP requests answered 4xx', async () => {
    const { e, text } = await message(on('error_rate', 'validation'));
    expect(e.likelyCause).toMatchObject({ rule: 'input_validation', evidence: ['HTTP 4xx share 30% (≥ 10%)'] });
    expect(text).toContain('Likely cause: Input validation');
  });
});

describe('memory trend on 6 minutes of history', () => {
  it('says why there is no forecast instead of "no upward trend" under a rising sparkline', async () => {
    const alert = alertOn('queue', {});
    const memory = {
      ...alert,
      labels: { alertname: 'GPUMemoryLeak', kind: 'memory', severity: 'warning', ...YOUNG_GPU },
    };
    const { e, text } = await message(memory);
    expect(e.trend).toMatchObject({ growing: false, noForecast: { reason: 'short_history', neededSeconds: 1800 } });
    expect(text).toMatch(/Memory trend: not enough history \([56] min of the 30 min needed\)/);
    expect(text).not.toContain('no upward trend');
    expect(text).toMatch(/Memory over the window: ▁[▁-█]*█/);
  });
});

describe(`a storm of ${STORM_REPLICAS} queue alerts`, () => {
  const storm = Array.from({ length: STORM_REPLICAS }, (_, i) => alertOn('queue', stormLabels(i)));

  /** Enriches `alerts` and returns the enrichments and the distinct queries sent. */
  async function enrichCounting(alerts: Alert[]): Promise<{ result: Map<string, Enrichment>; queries: number }> {
    const lines: string[] = [];
    const result = await enrich(alerts, { logger: createLogger('debug', (l) => lines.push(l)) });
    const done = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.event === 'enrich.done');
    return { result, queries: done?.queries as number };
  }

  it('costs the same queries as one of its alerts, and its digest ranks by requests waiting and names the shared cause', async () => {
    const one = await enrichCounting([storm[0]!]);
    const all = await enrichCounting(storm);
    expect(all.queries).toBe(one.queries);
    expect([...all.result.values()].every((e) => e.status === 'enriched')).toBe(true);

    const enriched = storm.map((a) => ({ ...a, enrichment: all.result.get(a.fingerprint)! }));
    const groupKey = '{}:{alertname="VLLMQueueBacklog"}';
    const webhook = {
      version: '4' as const,
      groupKey,
      truncatedAlerts: 0,
      status: 'firing' as const,
      receiver: 'team',
      groupLabels: { alertname: 'VLLMQueueBacklog' },
      commonLabels: { alertname: 'VLLMQueueBacklog' },
      commonAnnotations: {},
      externalURL: 'http://alertmanager:9093',
      alerts: storm,
    };
    const text = renderText(buildNotification(webhook, enriched));
    // Replicas 49, 99, 149, 199 wait 49 requests each: the most; 4 replicas wait none (no queueing).
    expect(text).toContain('Top 10 by severity, then value');
    expect(text).toContain('storm-model @ 10.1.0.49:8000 · Requests waiting 49\n');
    expect(text.indexOf('Requests waiting 49')).toBeLessThan(text.indexOf('Requests waiting 48'));
    expect(text).toContain(`Likely cause of ${STORM_REPLICAS - 4} of ${STORM_REPLICAS} alerts: Queueing`);
  });
});
