import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/alertmanager/schema.js';
import { DASHBOARD_UID, grafanaUrl } from '../../../shared/render/grafana.js';

const STARTS_AT = '2026-11-29T12:00:00Z';
const START_MS = Date.parse(STARTS_AT);
const HOUR = 3_600_000;

/** A rule's graph link as Prometheus writes it (`g0.expr`). */
const graph = (expr: string) => `http://prometheus:9090/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=1`;
const TTFT_RULE = graph(
  'histogram_quantile(0.99, sum by (model_name, le) (rate(vllm:time_to_first_token_seconds_bucket[5m]))) > 5',
);

type LinkedAlert = Pick<Alert, 'labels' | 'startsAt' | 'endsAt' | 'status' | 'generatorURL'>;

function alert(labels: Record<string, string>, over: Partial<LinkedAlert> = {}): LinkedAlert {
  return {
    labels: { alertname: 'VLLMHighTTFT', ...labels },
    startsAt: STARTS_AT,
    endsAt: '0001-01-01T00:00:00Z',
    status: 'firing',
    generatorURL: TTFT_RULE,
    ...over,
  };
}

const params = (url: string | undefined) => Object.fromEntries(new URL(url!).searchParams);

describe('grafanaUrl', () => {
  it('is undefined without GRAFANA_URL', () => {
    expect(grafanaUrl(undefined, alert({ model_name: 'm' }))).toBeUndefined();
    expect(grafanaUrl('', alert({ model_name: 'm' }))).toBeUndefined();
  });

  it("opens the shipped dashboard on the alert's model and instance, an hour either side of startsAt (epoch ms)", () => {
    const url = grafanaUrl('https://grafana.example.com', alert({ model_name: 'kv-model', instance: '10.0.1.7:8000' }));
    expect(url).toBe(
      `https://grafana.example.com/d/${DASHBOARD_UID}/vllm-fleet?var-model=kv-model&var-instance=10.0.1.7%3A8000&from=${START_MS - HOUR}&to=${START_MS + HOUR}`,
    );
  });

  it('encodes model names with slashes, spaces and query characters so they survive as one value', () => {
    const model = 'meta-llama/Llama 3.1&8B=#?+';
    const url = grafanaUrl('https://grafana.example.com', alert({ model_name: model, instance: '[::1]:8000' }))!;
    expect(url).not.toContain(' ');
    expect(url).toContain('var-model=meta-llama%2FLlama+3.1%268B%3D%23%3F%2B');
    expect(params(url)).toMatchObject({ 'var-model': model, 'var-instance': '[::1]:8000' });
  });

  it('keeps a path prefix and the query of GRAFANA_URL (orgId)', () => {
    const url = grafanaUrl('https://ops.example.com/grafana?orgId=2', alert({ model_name: 'm' }))!;
    expect(new URL(url).pathname).toBe(`/grafana/d/${DASHBOARD_UID}/vllm-fleet`);
    expect(params(url)).toMatchObject({ orgId: '2', 'var-model': 'm' });
  });

  it('uses a dashboard URL as it is (a dashboard imported under another uid)', () => {
    const url = grafanaUrl('https://g.example.com/d/abc123/my-vllm', alert({ model_name: 'm' }))!;
    expect(new URL(url).pathname).toBe('/d/abc123/my-vllm');
  });

  it('leaves out the variables the alert has no label for (the dashboard then shows All)', () => {
    expect(params(grafanaUrl('https://g.example.com', alert({})))).toEqual({
      from: String(START_MS - HOUR),
      to: String(START_MS + HOUR),
    });
  });

  it("does not pass a dcgm-exporter's instance (Hostname or hostname): it is the exporter, not a vLLM server", () => {
    for (const node of [{ Hostname: 'gpu-node-1' }, { hostname: 'gpu-node-1' }] as Record<string, string>[]) {
      const url = grafanaUrl('https://g.example.com', alert({ ...node, instance: '10.0.1.7:9400', gpu: '0' }));
      expect(params(url)).not.toHaveProperty('var-instance');
    }
  });

  it('reaches past the end of a resolved alert, and never shortens the hour after the start', () => {
    const longer = grafanaUrl(
      'https://g.example.com',
      alert({}, { status: 'resolved', endsAt: '2026-11-29T15:00:00Z' }),
    );
    expect(params(longer)).toMatchObject({
      from: String(START_MS - HOUR),
      to: String(START_MS + 3 * HOUR + 10 * 60_000),
    });
    const shorter = grafanaUrl(
      'https://g.example.com',
      alert({}, { status: 'resolved', endsAt: '2026-11-29T12:05:00Z' }),
    );
    expect(params(shorter)).toMatchObject({ to: String(START_MS + HOUR) });
  });

  it('links only alerts about vLLM or its GPUs: by their labels or by their rule expression', () => {
    const base = 'https://g.example.com';
    // The pipeline's own alerts and a web service's: an unrelated dashboard would only mislead.
    expect(
      grafanaUrl(
        base,
        alert(
          { instance: 'pipeline:8080', job: 'llm-alert-pipeline' },
          { generatorURL: graph('rate(llm_alert_pipeline_notifications_total{result="failed"}[5m]) > 0') },
        ),
      ),
    ).toBeUndefined();
    expect(
      grafanaUrl(base, alert({ alertname: 'AlertingPipelineHeartbeatMissing' }, { generatorURL: '' })),
    ).toBeUndefined();
    expect(
      grafanaUrl(
        base,
        alert({ instance: 'web:80' }, { generatorURL: graph('sum(rate(http_requests_total{status="5xx"}[5m])) > 1') }),
      ),
    ).toBeUndefined();
    // A server that stopped answering scrapes: only its rule says vLLM.
    expect(
      params(
        grafanaUrl(
          base,
          alert({ instance: '10.0.1.7:8000', job: 'vllm' }, { generatorURL: graph('up{job=~"(?i).*vllm.*"} == 0') }),
        ),
      ),
    ).toMatchObject({ 'var-instance': '10.0.1.7:8000' });
    for (const labels of [
      { model_name: 'm' },
      { engine: '0' },
      { Hostname: 'gpu-node-1' },
      { hostname: 'gpu-node-1' },
    ] as Record<string, string>[]) {
      expect(grafanaUrl(base, alert(labels, { generatorURL: '' }))).toBeDefined();
    }
    expect(grafanaUrl(base, alert({}, { generatorURL: graph('DCGM_FI_DEV_FB_USED > 70000') }))).toBeDefined();
  });

  it("gives no range for an unknown start (Go's zero time), so Grafana shows its default", () => {
    const url = grafanaUrl('https://g.example.com', alert({ model_name: 'm' }, { startsAt: '0001-01-01T00:00:00Z' }));
    expect(params(url)).toEqual({ 'var-model': 'm' });
  });
});
