/**
 * The shipped Grafana dashboard (`infra/grafana/vllm-fleet.json`): its layout, and every panel's
 * query run as Grafana would send it (variables resolved against Prometheus and interpolated) against
 * the real Prometheus back-filled with a mixed fleet (V0, V1 0.8, V1 0.10 with data-parallel engines;
 * dcgm-exporter with `Hostname`, `hostname` and pod mapping): each returns data for each engine
 * generation, and the GPU panels show the selected server's GPU only.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DASHBOARD_UID, grafanaUrl } from '../../shared/render/grafana.js';
import {
  ERROR_SHARE,
  FAILED_500_SHARE,
  FLEET,
  FLEET_END,
  FOREIGN_GPU_NODE,
  fleetOpenMetrics,
  REPETITION_SHARE,
  ROUTER_INSTANCE,
  type FleetEngine,
} from '../fixtures/prometheus/dashboard-fleet.js';
import { startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';
import {
  type Choice,
  interpolate,
  intervals,
  loadDashboard,
  queryPanels,
  resolveVariables,
} from '../helpers/grafana.js';

const dashboard = loadDashboard();
const END_S = FLEET_END.getTime() / 1000;
/** The panels' range: the last 45 minutes at a 60 s step (Grafana's `$__interval` for such a range on a wide panel). */
const RANGE = { startSeconds: END_S - 45 * 60, endSeconds: END_S };
const STEP_S = 60;
/** Every query goes through the dashboard's data source variable (not a uid of the author's Grafana). */
const DATASOURCE = { type: 'prometheus', uid: `\${datasource}` };

interface Series {
  metric: Record<string, string>;
  values: Array<[number, string]>;
}

let prometheus: RunningPrometheus;

beforeAll(async () => {
  prometheus = await startPrometheus(fleetOpenMetrics());
});

afterAll(async () => {
  await prometheus?.stop();
});

async function rangeQuery(expr: string): Promise<Series[]> {
  const params = new URLSearchParams({
    query: expr,
    start: String(RANGE.startSeconds),
    end: String(RANGE.endSeconds),
    step: String(STEP_S),
  });
  const res = await fetch(`${prometheus.url}/api/v1/query_range?${params}`, {
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { status: string; data: { result: Series[] }; error?: string };
  if (body.status !== 'success') throw new Error(`${body.error}\n  in ${expr}`);
  return body.data.result;
}

/** Series with at least one finite value (a quantile of no requests is NaN: no data to look at). */
const withData = (series: Series[]) => series.filter((s) => s.values.some(([, v]) => Number.isFinite(Number(v))));

/** The choices an alert's dashboard link makes (its `var-…` parameters). */
function choicesOfLink(engine: FleetEngine): Record<string, Choice> {
  const url = new URL(
    grafanaUrl('https://grafana.example.com', {
      labels: { model_name: engine.model, instance: engine.instance },
      startsAt: FLEET_END.toISOString(),
      endsAt: '0001-01-01T00:00:00Z',
      status: 'firing',
      generatorURL: '',
    })!,
  );
  return Object.fromEntries(
    [...url.searchParams].filter(([k]) => k.startsWith('var-')).map(([k, v]) => [k.slice(4), [v]]),
  );
}

/** Every panel target as Grafana sends it under `choices`: `[panel title, refId, PromQL]`. */
async function queriesUnder(choices: Record<string, Choice>): Promise<Array<[string, string, string]>> {
  const values = { ...(await resolveVariables(prometheus.url, dashboard, choices, RANGE)), ...intervals(STEP_S) };
  return queryPanels(dashboard).flatMap((p) =>
    p.targets!.map((t): [string, string, string] => [p.title, t.refId, interpolate(t.expr, values)]),
  );
}

const GPU_PANELS = ['GPU memory used and total', 'GPU utilization'];

describe('layout', () => {
  it('is the shipped dashboard the links open, for Grafana 10/11, with a data source, model and instance variable', () => {
    expect(dashboard.uid).toBe(DASHBOARD_UID);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    const vars = dashboard.templating.list;
    expect(vars.map((v) => [v.name, v.type, v.hide ?? 0])).toEqual([
      ['datasource', 'datasource', 0],
      ['model', 'query', 0],
      ['instance', 'query', 0],
      ['host', 'query', 2],
      ['pod', 'query', 2],
    ]);
    expect(vars.find((v) => v.type === 'datasource')).toMatchObject({ query: 'prometheus' });
  });

  it('has the rows operators expect, each with its panels, in order', () => {
    const rows: Record<string, string[]> = {};
    let current = '';
    for (const p of dashboard.panels) {
      if (p.type === 'row') rows[(current = p.title)] = [];
      else rows[current]!.push(p.title);
    }
    expect(rows).toEqual({
      'Requests and latency': [
        'In-flight requests',
        'Requests per second',
        'Time to first token p50 / p95 / p99',
        'Time per output token p95',
        'End-to-end request latency p50 / p99',
      ],
      'Memory and KV cache': ['KV-cache usage', 'Preemptions per second', 'GPU memory used and total'],
      'Throughput and resources': [
        'Tokens per second',
        'GPU utilization',
        'Success rate',
        'Finished requests by reason',
      ],
    });
  });

  it('queries only through the data source variable, with unique panel ids and no overlapping panels', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of queryPanels(dashboard)) {
      expect(p.datasource, p.title).toEqual(DATASOURCE);
      for (const t of p.targets!) expect(t.expr, p.title).not.toMatch(/\$\{?DS_|\[\[/);
    }
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query'))
      expect(v.datasource).toEqual(DATASOURCE);
    const cells = new Set<string>();
    for (const { gridPos: g, title } of dashboard.panels) {
      expect(g.x + g.w, title).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`), `${title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it('computes every quantile per instance: V0 and V1 bucket sets are never summed together', () => {
    const quantiles = queryPanels(dashboard)
      .flatMap((p) => p.targets!.map((t) => t.expr))
      .filter((e) => e.includes('histogram_quantile'));
    expect(quantiles.length).toBe(6);
    for (const expr of quantiles) {
      const calls = [...expr.matchAll(/histogram_quantile\([^,]+, sum by \(([^)]*)\)/g)];
      expect(calls.length, expr).toBe(expr.split('histogram_quantile').length - 1);
      for (const [, by] of calls) expect(by!.split(/,\s*/), expr).toEqual(expect.arrayContaining(['instance', 'le']));
    }
  });

  it('ships a provisioning example that loads dashboards from a folder', () => {
    const provisioning = parse(
      readFileSync(new URL('../../infra/grafana/dashboards.example.yml', import.meta.url), 'utf8'),
    ) as {
      apiVersion: number;
      providers: Array<{ type: string; options: { path: string } }>;
    };
    expect(provisioning.apiVersion).toBe(1);
    expect(provisioning.providers[0]).toMatchObject({ type: 'file', options: { path: expect.stringMatching(/^\//) } });
  });
});

describe('every panel query returns data against the real Prometheus', () => {
  for (const engine of FLEET) {
    it(`${engine.generation} (${engine.model} on ${engine.instance}), as an alert's link selects it`, async () => {
      const queries = await queriesUnder(choicesOfLink(engine));
      expect(queries.length).toBeGreaterThanOrEqual(16);
      for (const [title, refId, expr] of queries) {
        const series = withData(await rangeQuery(expr));
        expect(series.length, `${title} ${refId}: no data for ${engine.generation}\n  ${expr}`).toBeGreaterThan(0);
        if (GPU_PANELS.includes(title)) {
          // The selected server's GPU only: never another node's.
          expect(
            series.map((s) => s.metric.gpu),
            `${title} ${refId}`,
          ).toEqual([engine.gpu.gpu]);
        } else if (title !== 'Finished requests by reason') {
          expect(
            new Set(series.map((s) => `${s.metric.model_name} ${s.metric.instance}`)),
            `${title} ${refId}`,
          ).toEqual(new Set([`${engine.model} ${engine.instance}`]));
        }
      }
    });
  }

  it('with All models and instances: one quantile line per server, and the GPUs of the fleet but not a foreign one', async () => {
    for (const [title, refId, expr] of await queriesUnder({})) {
      const series = withData(await rangeQuery(expr));
      expect(series.length, `${title} ${refId}: no data\n  ${expr}`).toBeGreaterThan(0);
      if (expr.includes('histogram_quantile'))
        expect(series.map((s) => s.metric.instance).sort(), `${title} ${refId}`).toEqual(
          FLEET.map((e) => e.instance).sort(),
        );
      if (GPU_PANELS.includes(title)) {
        expect(series.map((s) => s.metric.gpu).sort(), `${title} ${refId}`).toEqual(FLEET.map((e) => e.gpu.gpu).sort());
        expect(series.some((s) => s.metric.Hostname === FOREIGN_GPU_NODE)).toBe(false);
      }
    }
  });

  it("with All models: production-stack's router copies of the queue draw no phantom series", async () => {
    for (const [title, refId, expr] of await queriesUnder({})) {
      if (GPU_PANELS.includes(title)) continue;
      const series = withData(await rangeQuery(expr));
      expect(
        series.filter((s) => !s.metric.model_name || s.metric.instance === ROUTER_INSTANCE),
        `${title} ${refId}`,
      ).toEqual([]);
    }
  });

  it('finished requests by reason: never the abort series, which no version increments', async () => {
    const [, , expr] = (await queriesUnder({})).find(([title]) => title === 'Finished requests by reason')!;
    const reasons = new Set((await rangeQuery(expr)).map((s) => s.metric.finished_reason));
    expect(reasons.has('abort')).toBe(false);
    expect([...reasons].sort()).toEqual(['error', 'length', 'repetition', 'stop']);
  });

  it('success rate: errors lower it, the abort series at 0 does not, and the missing failure counter is read as none', async () => {
    const rates = new Map<string, number>();
    for (const engine of FLEET) {
      const queries = await queriesUnder(choicesOfLink(engine));
      const [, , expr] = queries.find(([title]) => title === 'Success rate')!;
      const [series] = withData(await rangeQuery(expr));
      rates.set(engine.generation, Number(series!.values.at(-1)![1]));
    }
    expect(rates.get('V0')).toBe(1);
    expect(rates.get('V1 0.8')).toBe(1);
    expect(rates.get('V1 0.10')).toBeCloseTo(1 / (1 + ERROR_SHARE), 2);
    // vLLM main: repetition finishes are not failures, and neither are the API server's many 400s; its 500s are.
    expect(rates.get('main')).toBeCloseTo((1 + REPETITION_SHARE) / (1 + REPETITION_SHARE + FAILED_500_SHARE), 2);
  });

  it("the annotation of firing alerts finds the selected server's alerts", async () => {
    const annotation = dashboard.annotations.list.find((a) => a.expr);
    const values = {
      ...(await resolveVariables(prometheus.url, dashboard, choicesOfLink(FLEET[0]!), RANGE)),
      ...intervals(STEP_S),
    };
    const series = await rangeQuery(interpolate(annotation!.expr!, values));
    expect(series.map((s) => s.metric.instance)).toEqual([FLEET[0]!.instance]);
  });
});
