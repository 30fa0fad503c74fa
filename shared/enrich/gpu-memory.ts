/** Enricher for GPU memory alerts (leaks, OOM risk), from NVIDIA DCGM exporter metrics. */
import { selector } from '../prometheus/promql.js';
import { readSignals, type Enricher } from './enricher.js';
import { DCGM_SCOPE_LABELS, scopeOf } from './scope.js';
import { fitMemoryTrend } from './trend.js';

/**
 * Framebuffer used and free (MiB, summed over the GPUs the alert's labels select: one GPU when it
 * carries `gpu` and `Hostname`, or `UUID`), and the leak trend of "used" over the last
 * `memoryTrendWindowHours`. Capacity is the configured one, else used + free.
 * @see https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html
 */
export const gpuMemoryEnricher: Enricher<'gpu_memory'> = {
  kind: 'gpu_memory',
  enrich: async (alert, ctx) => {
    const scope = scopeOf(alert, DCGM_SCOPE_LABELS);
    const usedQuery = `sum(${selector('DCGM_FI_DEV_FB_USED', scope)})`;
    const [signals, series] = await Promise.all([
      readSignals(ctx, [
        { name: 'gpu_memory_used_mib', label: 'GPU memory used', unit: 'mebibytes', query: usedQuery },
        { name: 'gpu_memory_free_mib', label: 'GPU memory free', unit: 'mebibytes', query: `sum(${selector('DCGM_FI_DEV_FB_FREE', scope)})` },
      ]),
      ctx.range(usedQuery, ctx.memoryTrendWindowHours * 3600),
    ]);
    const [used, free] = signals.map((s) => s.value);
    const capacity = ctx.gpuMemoryCapacityMiB ?? (used != null && free != null ? used + free : null);
    const trend = fitMemoryTrend(series[0]?.points ?? [], capacity);
    return trend ? { signals, trend } : { signals };
  },
};
