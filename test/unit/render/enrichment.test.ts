/** How the new enrichment fields read in a message: values when fired → now, NaN and bounds named, trend, sparkline, cause. */
import { describe, expect, it } from 'vitest';
import { alertLines, PLAIN } from '../../../shared/render/content.js';
import type { EnrichedAlert, MemoryTrend, Signal } from '../../../shared/enrich/types.js';
import { formatMemoryTrend } from '../../../shared/enrich/values.js';
import { formatLikelyCause, formatReading, formatTrendBasis } from '../../../shared/render/format.js';
import { targetDownEnricher } from '../../../shared/enrich/kinds/target-down.js';
import { ruleAlert } from '../../fixtures/prometheus/alerts.js';
import { xidDown } from '../../fixtures/prometheus/down-alerts.js';
import { fakeContext, NOW, sample } from '../enrich/fake-context.js';

const p95: Signal = {
  name: 'ttft_p95_seconds',
  label: 'TTFT p95',
  unit: 'seconds',
  value: 2.5,
  query: 'q',
  nanMeans: 'no_requests',
  topBucket: 10,
};
const trend: MemoryTrend = {
  growthMiBPerHour: 800,
  rSquared: 0.998,
  usedMiB: 22_000,
  capacityMiB: 81_559,
  hoursToFull: 74.4,
  windowSeconds: 9000,
  points: 151,
  method: 'theil-sen',
  growing: true,
  restartedAt: '2026-11-29T10:15:00.000Z',
  outliers: 1,
  series: 'DCGM_FI_DEV_FB_USED',
  sparkline: '▃▄▅▆▇█▁▂▃▄',
};

describe('formatReading', () => {
  it('names NaN "no requests" where NaN means that, and keeps "no data" for an empty result', () => {
    expect(formatReading(Number.NaN, p95)).toBe('no requests');
    expect(formatReading(Number.NaN, { unit: 'seconds' })).toBe('no data (NaN)');
    expect(formatReading(null, p95)).toBe('no data');
    expect(formatReading(undefined, p95)).toBe('no data');
  });

  it('shows seconds elapsed (a target down for…) as a duration, not a measurement', () => {
    const downFor = { unit: 'seconds', elapsed: true } as const;
    expect([45, 720, 7500, 7200, 3 * 86_400 + 3600].map((v) => formatReading(v, downFor))).toEqual([
      '45 s',
      '12 min',
      '2 h 5 min',
      '2 h',
      '3 d 1 h',
    ]);
    expect(formatReading(Number.NaN, downFor)).toBe('no data (NaN)');
    expect(formatReading(Infinity, downFor)).toBe('+Inf');
    // A latency stays a measurement.
    expect(formatReading(720, { unit: 'seconds' })).toBe('720 s');
  });

  it('shows a quantile at the top finite bucket as "≥ bound"', () => {
    expect(formatReading(10, p95)).toBe('≥ 10.0 s');
    expect(formatReading(9.99, p95)).toBe('9.99 s');
    expect(formatReading(0.85, p95)).toBe('850 ms');
  });
});

describe('memory trend', () => {
  it('says "no upward trend" when the trend is not real, whatever its slope', () => {
    expect(formatMemoryTrend({ ...trend, growing: false, hoursToFull: null })).toBe('no upward trend');
    expect(formatMemoryTrend(trend)).toBe('+800 MiB/h · full in ~3.1 d · R² 1.00');
  });

  it('states the basis: method, window, restart, and a non-default series', () => {
    expect(formatTrendBasis(trend)).toBe('Theil–Sen fit over 2.5 h, since a restart at 2026-11-29 10:15:00 UTC');
    expect(
      formatTrendBasis({
        ...trend,
        restartedAt: undefined,
        windowSeconds: 21_600,
        series: 'process_resident_memory_bytes',
      }),
    ).toBe('Theil–Sen fit over 6 h, of process_resident_memory_bytes');
  });
});

describe('alertLines with the new fields', () => {
  const alert = ruleAlert({ alertname: 'VLLMHighTTFT', model_name: 'm' }, 'x > 1', 'f');

  it('shows each value when fired → now, the trend with its basis and sparkline, and the likely cause with evidence', () => {
    const enriched: EnrichedAlert = {
      ...alert,
      enrichment: {
        status: 'enriched',
        kind: 'gpu_memory',
        signals: [
          { ...p95, atStart: Number.NaN },
          { name: 'w', label: 'Requests waiting', unit: 'count', value: 40, atStart: 13, query: 'q' },
        ],
        trend,
        likelyCause: { rule: 'memory_leak', cause: 'Memory leak.', action: 'Restart.', evidence: ['a', 'b'] },
      },
    };
    expect(alertLines(enriched, PLAIN).slice(2, -1)).toEqual([
      'When fired → now: TTFT p95: no requests → 2.50 s · Requests waiting: 13 → 40',
      'Memory trend: +800 MiB/h · full in ~3.1 d · R² 1.00 (Theil–Sen fit over 2.5 h, since a restart at 2026-11-29 10:15:00 UTC)',
      'Memory over the window: ▃▄▅▆▇█▁▂▃▄',
      'Likely cause: Memory leak.',
      'Evidence: a; b',
      'Try: Restart.',
    ]);
  });

  it('says nothing about a cause when there is none, and no legend without values at the start', () => {
    const enriched: EnrichedAlert = { ...alert, enrichment: { status: 'enriched', kind: 'latency', signals: [p95] } };
    expect(alertLines(enriched, PLAIN).slice(2, -1)).toEqual(['TTFT p95: 2.50 s']);
    expect(
      formatLikelyCause({ signals: [], likelyCause: { rule: 'r', cause: 'c', action: 'a', evidence: ['e'] } }),
    ).toEqual(['Likely cause: c', 'Evidence: e', 'Try: a']);
  });
});

describe('a target_down alert in a message', () => {
  it('reads "down for" in minutes and hours (was "720 s")', async () => {
    const probe = fakeContext([xidDown]);
    await targetDownEnricher.enrich(xidDown, probe.ctx);
    const downFor = probe.queries().find((q) => q.startsWith('time() - '))!;
    const target = { job: xidDown.labels.job!, instance: xidDown.labels.instance! };
    // 3 minutes down when the alert fired (the rule's `for`), 12 minutes now.
    const { ctx } = fakeContext([xidDown], {
      instant: { [`${downFor} @${NOW.getTime() / 1000}`]: [sample(target, 720)], [downFor]: [sample(target, 180)] },
    });
    const enriched: EnrichedAlert = {
      ...xidDown,
      enrichment: { status: 'enriched', kind: 'target_down', ...(await targetDownEnricher.enrich(xidDown, ctx)) },
    };
    expect(alertLines(enriched, PLAIN)).toContain(
      'When fired → now: Down for (since last successful scrape): 3 min → 12 min',
    );
  });
});

describe('signals a server does not expose', () => {
  const signal = (name: string, value: number | null, atStart?: number | null): Signal => ({
    name,
    label: name,
    unit: 'count',
    value,
    query: 'q',
    ...(atStart === undefined ? {} : { atStart }),
  });
  const alert = (signals: Signal[]): EnrichedAlert => ({
    ...ruleAlert({ alertname: 'VLLMQueueBacklog', model_name: 'm' }, 'x > 1', 'f'),
    enrichment: { status: 'enriched', kind: 'queue', signals },
  });

  it('reads what is known, then one line for the signals with no series now nor when fired, instead of a "no data" each', () => {
    const lines = alertLines(
      alert([
        signal('Requests waiting', 60, 40),
        signal('Waiting for capacity', null, null),
        signal('Waiting, deferred', null, null),
        signal('Requests running', 48, 48),
        signal('GPU utilization', null, null),
      ]),
      PLAIN,
    );
    expect(lines).toContain('When fired → now: Requests waiting: 40 → 60 · Requests running: 48 → 48');
    expect(lines).toContain(
      '3 signals not exposed by this server: Waiting for capacity, Waiting, deferred, GPU utilization',
    );
    expect(lines.join('\n')).not.toContain('no data');
  });

  it('keeps a signal that had data when fired, or has now, on its own line: its "no data" says something', () => {
    const lines = alertLines(alert([signal('Requests waiting', null, 40), signal('Requests running', 3, null)]), PLAIN);
    expect(lines).toContain('When fired → now: Requests waiting: 40 → no data · Requests running: no data → 3');
    expect(lines.join('\n')).not.toContain('not exposed');
  });

  it('says it in the channel language', () => {
    const lines = alertLines(alert([signal('Requests waiting', 1), signal('GPU utilization', null)]), PLAIN, {
      locale: 'zh-CN',
    });
    expect(lines).toContain('此服务器未暴露的 1 项指标：GPU utilization');
  });
});
