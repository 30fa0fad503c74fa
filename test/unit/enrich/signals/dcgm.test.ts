/**
 * DCGM signals for vLLM alerts: matched to the server by pod or host, never guessed; dcgm-exporter's
 * node label in both spellings (`Hostname` before 2026, `hostname` since), MIG and pod mapping as real
 * exporters print them (test/fixtures/exposition).
 */
import { describe, expect, it } from 'vitest';
import {
  GPU_UTILIZATION,
  GPU_XID,
  gpuBelongs,
  hostOf,
  readGpuSignals,
} from '../../../../shared/enrich/signals/dcgm.js';
import { exposition, firstSample } from '../../../fixtures/exposition/index.js';
import { ruleAlert } from '../../../fixtures/prometheus/alerts.js';
import { fakeContext, sample } from '../fake-context.js';

const vllm = (labels: Record<string, string>, i = 0) =>
  ruleAlert({ alertname: 'TTFTHigh', model_name: 'm', ...labels }, 'x > 1', `f${i}`);

describe('gpuBelongs: a DCGM series and a vLLM alert', () => {
  it('matches dcgm-exporter 3.x (Hostname) and 2026 (hostname) by the node name the alert carries', () => {
    const old = firstSample('dcgm-gpu-util', 'DCGM_FI_DEV_GPU_UTIL').labels;
    const fresh = exposition('dcgm-2026-hostname')[0]!.labels;
    expect(old.Hostname).toBe('gpu-node-c');
    expect(fresh.hostname).toBe('dcgm-exporter-0');
    expect(gpuBelongs(old, { node: 'gpu-node-c' })).toBe(true);
    expect(gpuBelongs(old, { instance: 'gpu-node-c:8000' })).toBe(true);
    expect(gpuBelongs(fresh, { hostname: 'dcgm-exporter-0' })).toBe(true);
    expect(gpuBelongs(old, { instance: 'gpu-node-d:8000' })).toBe(false);
  });

  it('matches by pod when both carry one, and never by host then', () => {
    const mapped = firstSample('dcgm-2025-pod-mapping', 'DCGM_FI_PROF_GR_ENGINE_ACTIVE').labels;
    expect(gpuBelongs(mapped, { pod: 'qwen3-8b-predictor-0', namespace: 'inference' })).toBe(true);
    expect(gpuBelongs(mapped, { pod: 'qwen3-8b-predictor-0', namespace: 'other' })).toBe(false);
    expect(gpuBelongs(mapped, { pod: 'another-pod', node: 'gpu-node-b' })).toBe(false);
    // The alert carries no pod: the host decides.
    expect(gpuBelongs(mapped, { node: 'gpu-node-b' })).toBe(true);
  });

  it("compares the mapped pod kept as exported_pod when the scrape's target labels took pod (the exporter's own)", () => {
    const scraped = {
      gpu: '0',
      hostname: 'dcgm-exporter-x7k2p',
      pod: 'dcgm-exporter-x7k2p',
      namespace: 'gpu-operator',
      exported_pod: 'qwen3-8b-predictor-0',
      exported_namespace: 'inference',
    };
    expect(gpuBelongs(scraped, { pod: 'qwen3-8b-predictor-0', namespace: 'inference' })).toBe(true);
    expect(gpuBelongs(scraped, { pod: 'dcgm-exporter-x7k2p', namespace: 'gpu-operator' })).toBe(false);
  });

  it('matches bare metal by the host part of both instances', () => {
    expect(gpuBelongs({ gpu: '0', instance: '10.0.1.7:9400' }, { instance: '10.0.1.7:8000' })).toBe(true);
    expect(gpuBelongs({ gpu: '0', instance: '10.0.1.8:9400' }, { instance: '10.0.1.7:8000' })).toBe(false);
    expect(gpuBelongs({ gpu: '0' }, { model_name: 'm' })).toBe(false);
    expect(hostOf('[::1]:9400')).toBe('::1');
    expect(hostOf('::1')).toBe('::1');
  });
});

describe('readGpuSignals', () => {
  it('reads GPU utilization (percent) as a ratio, the mean of the matched GPUs, with one query for all alerts', async () => {
    const peers = Array.from({ length: 20 }, (_, i) => vllm({ instance: `node-${i}:8000` }, i));
    const { ctx, queries } = fakeContext(peers);
    await Promise.all(peers.map((p) => readGpuSignals(ctx, p, [GPU_UTILIZATION])));
    // One lookup of the alerts' servers (none found here: their own labels locate them), one GPU query.
    expect(queries()).toHaveLength(2);
    const [query, lookup] = queries() as [string, string];
    expect(lookup).toBe(
      'group by (model_name, instance, namespace, pod, job, node, host, Hostname, hostname) (vllm:num_requests_running{model_name="m",instance=~"node-0:8000|node-10:8000|node-11:8000|node-12:8000|node-13:8000|node-14:8000|node-15:8000|node-16:8000|node-17:8000|node-18:8000|node-19:8000|node-1:8000|node-2:8000|node-3:8000|node-4:8000|node-5:8000|node-6:8000|node-7:8000|node-8:8000|node-9:8000",model_name!=""})',
    );
    expect(query).toContain('DCGM_FI_DEV_GPU_UTIL{Hostname=~"node-0|node-1|node-10|');
    expect(query).toContain('DCGM_FI_DEV_GPU_UTIL{hostname=~"node-0|');
    const answers = {
      instant: {
        [query]: [
          sample({ Hostname: 'node-3', gpu: '0' }, 0.9),
          sample({ hostname: 'node-3', gpu: '1' }, 0.5),
          sample({ Hostname: 'node-4', gpu: '0' }, 0.1),
        ],
      },
    };
    const [a] = await readGpuSignals(fakeContext(peers, answers).ctx, peers[3]!, [GPU_UTILIZATION]);
    expect(a).toMatchObject({ name: 'gpu_utilization_ratio', unit: 'ratio', value: 0.7, atStart: 0.7 });
    const [none] = await readGpuSignals(fakeContext(peers, answers).ctx, peers[5]!, [GPU_UTILIZATION]);
    expect(none).toMatchObject({ value: null, atStart: null });
  });

  it('sends no GPU query and reads no data for an alert whose servers name neither a pod nor a host', async () => {
    const alert = vllm({});
    const { ctx, queries } = fakeContext([alert]);
    const [signal] = await readGpuSignals(ctx, alert, [GPU_UTILIZATION, GPU_XID]);
    expect(queries()).toEqual([
      'group by (model_name, namespace, pod, instance, job, node, host, Hostname, hostname) (vllm:num_requests_running{model_name="m",model_name!=""})',
    ]);
    expect(signal).toMatchObject({ value: null, atStart: null });
  });

  it("reaches a model-wide alert's pods through its engine series, and their GPUs by the pods dcgm-exporter maps", async () => {
    const alert = vllm({});
    const lookup =
      'group by (model_name, namespace, pod, instance, job, node, host, Hostname, hostname) (vllm:num_requests_running{model_name="m",model_name!=""})';
    const pods = [
      sample({ model_name: 'm', namespace: 'llm', pod: 'm-0', instance: '10.9.0.1:8000', job: 'pods' }, 1),
      sample({ model_name: 'm', namespace: 'llm', pod: 'm-1', instance: '10.9.0.2:8000', job: 'pods' }, 1),
    ];
    const { ctx, queries } = fakeContext([alert], { instant: { [lookup]: pods } });
    await readGpuSignals(ctx, alert, [GPU_UTILIZATION]);
    const gpu = queries()[1]!;
    expect(gpu).toContain('DCGM_FI_DEV_GPU_UTIL{pod=~"m-0|m-1"}');
    const answered = fakeContext([alert], {
      instant: {
        [lookup]: pods,
        [gpu]: [
          sample({ gpu: '0', pod: 'm-0', namespace: 'llm', hostname: 'dcgm-exporter-a' }, 0.9),
          sample({ gpu: '1', pod: 'm-1', namespace: 'llm', hostname: 'dcgm-exporter-a' }, 0.5),
          sample({ gpu: '2', pod: 'other-0', namespace: 'llm', hostname: 'dcgm-exporter-a' }, 0.1),
        ],
      },
    });
    const [signal] = await readGpuSignals(answered.ctx, alert, [GPU_UTILIZATION]);
    expect(signal).toMatchObject({ label: 'GPU utilization', value: 0.7 });
  });

  it('reads a time-shared GPU as one device: the device series for a host-matched alert, never the sum', async () => {
    const alert = vllm({ instance: 'gpu-node-40:8000', job: 'vllm' });
    const { ctx, queries } = fakeContext([alert]);
    await readGpuSignals(ctx, alert, [GPU_UTILIZATION]);
    const gpu = queries()[0]!;
    const device = { gpu: '0', UUID: 'GPU-4', hostname: 'gpu-node-40' };
    const { ctx: answered } = fakeContext([alert], {
      instant: {
        [gpu]: [
          sample(device, 0.9),
          sample({ ...device, pod: 'a-0', namespace: 'llm', vgpu: '0' }, 0.55),
          sample({ ...device, pod: 'b-0', namespace: 'llm', vgpu: '1' }, 0.35),
        ],
      },
    });
    const [signal] = await readGpuSignals(answered, alert, [GPU_UTILIZATION]);
    expect(signal).toMatchObject({ label: 'GPU utilization (host average)', value: 0.9 });
  });

  it('reads the last XID code over the rate window, the highest of the matched GPUs', async () => {
    const alert = vllm({ pod: 'p-0', namespace: 'inference' });
    const query =
      'max by (Hostname, hostname, instance, pod, namespace, exported_pod, exported_namespace, gpu, UUID, GPU_I_ID) (max_over_time(DCGM_FI_DEV_XID_ERRORS{pod=~"p-0"}[5m]) or max_over_time(DCGM_FI_DEV_XID_ERRORS{exported_pod=~"p-0"}[5m]))';
    const { ctx } = fakeContext([alert], {
      instant: {
        [query]: [
          sample({ pod: 'p-0', gpu: '0' }, 0),
          sample({ pod: 'p-0', gpu: '1' }, 79),
          sample({ pod: 'p-1', gpu: '2' }, 48),
        ],
      },
    });
    const [signal] = await readGpuSignals(ctx, alert, [GPU_XID]);
    expect(signal).toMatchObject({ name: 'gpu_xid_last', value: 79, query });
  });
});
