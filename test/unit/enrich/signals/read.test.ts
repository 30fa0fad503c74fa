/** Batched reading: one query per signal for all peer alerts, matched back to each alert by its labels. */
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../../shared/alertmanager/schema.js';
import { aggregate, selector } from '../../../../shared/prometheus/promql.js';
import type { SignalDef } from '../../../../shared/enrich/enricher.js';
import { pointAt } from '../../../../shared/enrich/signals/plan.js';
import { readSignals, shapePeers } from '../../../../shared/enrich/signals/read.js';
import { ENRICHERS } from '../../../../shared/enrich/kinds/index.js';
import { ENGINE_GENERATION, latencyQuantile } from '../../../../shared/enrich/signals/vllm.js';
import { ruleAlert } from '../../../fixtures/prometheus/alerts.js';
import { fakeContext, NOW, sample } from '../fake-context.js';

const nowS = NOW.getTime() / 1000;
const WAITING: SignalDef = {
  name: 'requests_waiting',
  label: 'Requests waiting',
  unit: 'count',
  scopeLabels: ['model_name', 'instance'],
  expr: (s) => aggregate('sum', s.by, selector('vllm:num_requests_waiting', s.matchers)),
};
const modelAlert = (
  model: string,
  i: number,
  extra: Record<string, string> = {},
  startsAt = '2026-11-29T12:40:00Z',
): Alert => ({ ...ruleAlert({ alertname: 'Q', model_name: model, ...extra }, 'x > 1', `f${i}`), startsAt });

describe('readSignals across peers', () => {
  it('sends one query per signal and time for 100 alerts, and gives each alert its own series', async () => {
    const peers = Array.from({ length: 100 }, (_, i) => modelAlert(`m${String(i).padStart(2, '0')}`, i));
    const expr = `sum by (model_name) (vllm:num_requests_waiting{model_name=~"${peers.map((p) => p.labels.model_name).join('|')}"})`;
    const answer = peers.map((p, i) => sample({ model_name: p.labels.model_name! }, i));
    const { ctx, asked } = fakeContext(peers, { instant: { [expr]: answer } });
    const results = await Promise.all(peers.map((p) => readSignals(ctx, p, [WAITING])));
    expect(new Set(asked)).toEqual(
      new Set([`instant @${nowS} ${expr}`, `instant @${Date.parse('2026-11-29T12:40:00Z') / 1000} ${expr}`]),
    );
    expect(results.map(([s]) => s!.value)).toEqual(peers.map((_, i) => i));
  });

  it('costs the same number of distinct queries for 1, 10 and 100 alerts of a kind', async () => {
    const distinct = async (n: number) => {
      const peers = Array.from({ length: n }, (_, i) => modelAlert(`m${i}`, i, { instance: 'i' }));
      const { ctx, asked } = fakeContext(peers);
      await Promise.all(peers.map((p) => ENRICHERS.latency.enrich(p, ctx)));
      return new Set(asked).size;
    };
    const one = await distinct(1);
    // latency: 20 vLLM signals × (now, when fired) + 3 histograms' bucket bounds + its servers' lookup
    // + GPU utilization × 2.
    expect(one).toBe(46);
    expect(await distinct(10)).toBe(one);
    expect(await distinct(100)).toBe(one);
  });

  it('asks each query once for a kind’s alerts of one shape, not once per alert (the reads are planned once and shared)', async () => {
    const calls = async (n: number) => {
      const peers = Array.from({ length: n }, (_, i) => modelAlert(`m${i}`, i, { instance: 'i' }));
      const { ctx, asked } = fakeContext(peers);
      await Promise.all(peers.map((p) => ENRICHERS.latency.enrich(p, ctx)));
      return asked.length;
    };
    expect(await calls(50)).toBe(await calls(1));
  });

  it('reads an alert whose startsAt does not parse without the start query: that query failing fails its peers, not it', async () => {
    const parsed = modelAlert('a', 1);
    const unparsed = modelAlert('b', 2, {}, 'not a time');
    const { ctx } = fakeContext([parsed, unparsed], {
      instant: {
        [`sum by (model_name) (vllm:num_requests_waiting{model_name=~"a|b"})`]: [sample({ model_name: 'b' }, 7)],
      },
    });
    const failing = {
      ...ctx,
      instant: (expr: string, at?: Date) =>
        at && at.getTime() !== NOW.getTime() ? Promise.reject(new Error('start read failed')) : ctx.instant(expr, at),
    };
    const [a, b] = await Promise.allSettled([
      readSignals(failing, parsed, [WAITING]),
      readSignals(failing, unparsed, [WAITING]),
    ]);
    expect(a).toMatchObject({ status: 'rejected', reason: { message: 'start read failed' } });
    expect(b).toMatchObject({ status: 'fulfilled', value: [{ name: 'requests_waiting', value: 7 }] });
    expect((b as PromiseFulfilledResult<unknown[]>).value[0]).not.toHaveProperty('atStart');
  });

  it('escapes regex metacharacters of label values in the alternation', async () => {
    const peers = [modelAlert('qwen3-8b.v2', 1), modelAlert('llama+(x)', 2)];
    const { ctx, queries } = fakeContext(peers);
    await readSignals(ctx, peers[0]!, [WAITING]);
    expect(queries()).toEqual([
      String.raw`sum by (model_name) (vllm:num_requests_waiting{model_name=~"llama\\+\\(x\\)|qwen3-8b\\.v2"})`,
    ]);
  });

  it('keeps alerts with different identifying label names in separate queries, so none is mixed with another shape', async () => {
    const fleetWide = modelAlert('a', 1);
    const perInstance = modelAlert('a', 2, { instance: 'h:1' });
    expect(shapePeers(fleetWide, [fleetWide, perInstance], WAITING.scopeLabels)).toMatchObject({
      peers: [fleetWide],
      by: ['model_name'],
    });
    const { ctx, queries } = fakeContext([fleetWide, perInstance]);
    await Promise.all([readSignals(ctx, fleetWide, [WAITING]), readSignals(ctx, perInstance, [WAITING])]);
    expect(queries()).toEqual([
      'sum by (model_name) (vllm:num_requests_waiting{model_name="a"})',
      'sum by (model_name, instance) (vllm:num_requests_waiting{model_name="a",instance="h:1"})',
    ]);
  });

  it('reads peers with different startsAt from one range query: the first point at or after each start', async () => {
    const early = modelAlert('a', 1, {}, '2026-11-29T12:00:00Z');
    const late = modelAlert('b', 2, {}, '2026-11-29T12:30:30Z');
    const expr = 'sum by (model_name) (vllm:num_requests_waiting{model_name=~"a|b"})';
    const points = (base: number) =>
      Array.from({ length: 46 }, (_, i) => ({
        time: Date.parse('2026-11-29T12:00:00Z') / 1000 + i * 60,
        value: base + i,
      }));
    const { ctx, asked } = fakeContext([early, late], {
      instant: { [expr]: [sample({ model_name: 'a' }, 1), sample({ model_name: 'b' }, 2)] },
      range: {
        [expr]: [
          { metric: { model_name: 'a' }, points: points(100) },
          { metric: { model_name: 'b' }, points: points(200) },
        ],
      },
    });
    const [[a], [b]] = await Promise.all([readSignals(ctx, early, [WAITING]), readSignals(ctx, late, [WAITING])]);
    expect(a).toMatchObject({ value: 1, atStart: 100 });
    expect(b).toMatchObject({ value: 2, atStart: 231 });
    expect(new Set(asked)).toEqual(new Set([`instant @${nowS} ${expr}`, `range 2700/60 ${expr}`]));
  });

  it('expands a breakdown into one signal per label value, sorted, each with its value when fired', async () => {
    const alert = modelAlert('a', 1);
    const def: SignalDef = {
      ...WAITING,
      name: 'finished_per_second',
      label: 'Finished',
      unit: 'per_second',
      breakdown: 'finished_reason',
    };
    const expr = 'sum by (model_name, finished_reason) (vllm:num_requests_waiting{model_name="a"})';
    const at = Date.parse(alert.startsAt) / 1000;
    const { ctx } = fakeContext([alert], {
      instant: {
        [`${expr} @${nowS}`]: [
          sample({ model_name: 'a', finished_reason: 'stop' }, 3),
          sample({ model_name: 'a', finished_reason: 'abort' }, 1),
        ],
        [`${expr} @${at}`]: [sample({ model_name: 'a', finished_reason: 'stop' }, 2)],
      },
    });
    const signals = await readSignals(ctx, alert, [def]);
    expect(signals.map((s) => [s.name, s.label, s.value, s.atStart])).toEqual([
      ['finished_per_second:abort', 'Finished (abort)', 1, null],
      ['finished_per_second:stop', 'Finished (stop)', 3, 2],
    ]);
  });

  it('a breakdown with no series is one signal with no data', async () => {
    const alert = modelAlert('a', 1);
    const { ctx } = fakeContext([alert]);
    const signals = await readSignals(ctx, alert, [{ ...WAITING, breakdown: 'finished_reason' }]);
    expect(signals.map((s) => [s.name, s.value])).toEqual([['requests_waiting', null]]);
  });

  it('gives a quantile the top finite bucket of its own histogram', async () => {
    const alert = modelAlert('a', 1);
    const def: SignalDef = {
      ...WAITING,
      name: 'ttft_p99_seconds',
      unit: 'seconds',
      histogram: ['h_bucket'],
      nanMeans: 'no_requests',
    };
    const buckets = ['0.5', '10', '+Inf'].map((le) => sample({ model_name: 'a', le }, 1));
    const { ctx, queries } = fakeContext([alert], {
      instant: {
        'count by (le, model_name) (h_bucket{model_name="a"})': [...buckets, sample({ model_name: 'b', le: '20' }, 1)],
      },
    });
    const [signal] = await readSignals(ctx, alert, [def]);
    expect(signal).toMatchObject({ topBucket: 10, nanMeans: 'no_requests' });
    expect(queries()).toContain('count by (le, model_name) (h_bucket{model_name="a"})');
  });
});

describe('quantiles per engine generation', () => {
  const quantile = latencyQuantile('e2e_p99_seconds', 'End-to-end latency p99', 0.99, ['h_bucket']);
  const alert = modelAlert('a', 1);
  const expr = quantile.expr({ matchers: ['model_name="a"'], by: ['model_name'] });
  const bounds = `count by (le, engine_generation, model_name) (${ENGINE_GENERATION.tag('h_bucket{model_name="a"}')})`;
  const bucket = (gen: string, le: string) => sample({ model_name: 'a', engine_generation: gen, le }, 1);

  it('never sums V0 and V1 buckets: a fleet mid-migration reads one quantile per generation, each with its own top bucket', async () => {
    expect(expr).toContain('sum by (le, engine_generation, model_name) (label_replace(');
    const { ctx } = fakeContext([alert], {
      instant: {
        [expr]: [
          sample({ model_name: 'a', engine_generation: 'v0' }, 12),
          sample({ model_name: 'a', engine_generation: 'v1' }, 3),
        ],
        [bounds]: [bucket('v0', '60.0'), bucket('v0', '+Inf'), bucket('v1', '7680.0'), bucket('v1', '+Inf')],
      },
    });
    const signals = await readSignals(ctx, alert, [quantile]);
    expect(signals.map((s) => [s.name, s.label, s.value, s.topBucket])).toEqual([
      ['e2e_p99_seconds:v0', 'End-to-end latency p99 (V0 engine)', 12, 60],
      ['e2e_p99_seconds:v1', 'End-to-end latency p99 (V1 engine)', 3, 7680],
    ]);
  });

  it('reads one generation as the plain signal', async () => {
    const { ctx } = fakeContext([alert], {
      instant: {
        [expr]: [sample({ model_name: 'a', engine_generation: 'v1' }, 3)],
        [bounds]: [bucket('v1', '7680.0')],
      },
    });
    const signals = await readSignals(ctx, alert, [quantile]);
    expect(signals.map((s) => [s.name, s.label, s.value, s.topBucket])).toEqual([
      ['e2e_p99_seconds', 'End-to-end latency p99', 3, 7680],
    ]);
  });
});

describe('pointAt', () => {
  const points = [60, 120, 180, 3600].map((time) => ({ time, value: time }));
  it('takes the first point at or after the time, within one step', () => {
    expect(pointAt(points, 100)?.time).toBe(120);
    expect(pointAt(points, 120)?.time).toBe(120);
  });
  it('falls back to the last point before it within the lookback', () => {
    expect(pointAt(points, 400)?.time).toBe(180);
  });
  it('never stands a point from far away in for the time', () => {
    expect(pointAt(points, 1000)).toBeUndefined();
    expect(pointAt([{ time: 7200, value: 1 }], 60)).toBeUndefined();
  });
});
