/**
 * Enricher for memory alerts (GPU memory leaks, OOM risk): used and total memory, and the leak
 * trend of the configured memory series (NVIDIA DCGM's `DCGM_FI_DEV_FB_USED` by default).
 * @see https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html
 */
import { aggregate, selector } from '../../prometheus/promql.js';
import { MEMORY_UNIT_BYTES, type Enricher, type MemorySettings, type QueryScope, type SignalDef } from '../enricher.js';
import { itemsOf, readSignals, shapePeers } from '../signals/read.js';
import { DCGM_SCOPE_LABELS, TARGET_SCOPE_LABELS } from '../signals/scope.js';
import { fitMemoryTrend } from '../trend/index.js';

/** DCGM's framebuffer-used gauge, MiB: the default memory series. */
export const DCGM_FB_USED = 'DCGM_FI_DEV_FB_USED';

const MIB = MEMORY_UNIT_BYTES.MiB;

/** Whether the series is a DCGM exporter field (then scoped by GPU labels, and capacity is used + free). */
const isDcgm = (series: string) => series.startsWith('DCGM_FI_');

/** `expr` converted from the series' unit to MiB. */
function inMiB(expr: string, memory: MemorySettings): string {
  const bytes = MEMORY_UNIT_BYTES[memory.unit];
  if (bytes === MIB) return expr;
  return bytes < MIB ? `${expr} / ${MIB / bytes}` : `${expr} * ${bytes / MIB}`;
}

/**
 * Labels that tell one GPU (or MIG instance) of a host apart, whatever pod labels its series carry:
 * dcgm-exporter's per-process series (`--kubernetes-virtual-gpus`) sit beside the device's with the
 * same name and these labels, plus the sharing pod's.
 */
const DEVICE_LABELS = ['Hostname', 'hostname', 'instance', 'gpu', 'UUID', 'GPU_I_ID'] as const;

/**
 * A DCGM field summed over the alert's GPUs, each GPU read once: the largest of its series (the
 * device's own holds at least each process's share), unless the alert names a pod, whose series
 * then stays its own.
 */
const perDevice = (selector: string, by: readonly string[]) =>
  aggregate('sum', by, aggregate('max', [...new Set([...by, ...DEVICE_LABELS])], selector));

/** The memory series summed over the alert's series (a DCGM field: over its GPUs, {@link perDevice}), in MiB. */
function usedDef(memory: MemorySettings): SignalDef {
  const dcgm = memory.series === DCGM_FB_USED;
  return {
    name: dcgm ? 'gpu_memory_used_mib' : 'memory_used_mib',
    label: dcgm ? 'GPU memory used' : `Memory used (${memory.series})`,
    unit: 'mebibytes',
    scopeLabels: isDcgm(memory.series) ? DCGM_SCOPE_LABELS : TARGET_SCOPE_LABELS,
    expr: (s: QueryScope) => {
      const series = selector(memory.series, s.matchers);
      return inMiB(isDcgm(memory.series) ? perDevice(series, s.by) : aggregate('sum', s.by, series), memory);
    },
  };
}

const USED_DEFS = new WeakMap<MemorySettings, SignalDef>();
const DEF_LISTS = new WeakMap<SignalDef, readonly SignalDef[]>();
const RANGE_TEXTS = new WeakMap<SignalDef, WeakMap<QueryScope, string>>();

/**
 * {@link usedDef} once per group's settings: one definition object, so the text memos keyed by it
 * hit for every alert of a storm.
 */
function usedDefOnce(memory: MemorySettings): SignalDef {
  let def = USED_DEFS.get(memory);
  if (!def) {
    def = usedDef(memory);
    USED_DEFS.set(memory, def);
  }
  return def;
}

/**
 * The trend's range query for a scope, built once: a storm's scope names every peer (~100 KB), and
 * building it per alert only to find it in the query cache was O(alerts²) text.
 */
function rangeText(def: SignalDef, scope: QueryScope): string {
  let texts = RANGE_TEXTS.get(def);
  if (!texts) {
    texts = new WeakMap();
    RANGE_TEXTS.set(def, texts);
  }
  let text = texts.get(scope);
  if (text === undefined) {
    text = def.expr(scope);
    texts.set(scope, text);
  }
  return text;
}

/** `DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE` of each of the alert's GPUs ({@link perDevice}), summed, MiB. */
export const GPU_MEMORY_TOTAL: SignalDef = {
  name: 'gpu_memory_total_mib',
  label: 'GPU memory total',
  unit: 'mebibytes',
  scopeLabels: DCGM_SCOPE_LABELS,
  expr: (s) =>
    aggregate(
      'sum',
      s.by,
      `${perDevice(selector(DCGM_FB_USED, s.matchers), s.by)} + ${perDevice(selector('DCGM_FI_DEV_FB_FREE', s.matchers), s.by)}`,
    ),
};

/**
 * Memory used and (for DCGM's framebuffer) total, MiB, summed over the series the alert's labels
 * select (one GPU when it carries `gpu` and `Hostname`, or `UUID`); and the leak trend of "used" over
 * the last `memory.windowHours`, against the configured capacity, else used + free.
 */
export const gpuMemoryEnricher: Enricher<'gpu_memory'> = {
  kind: 'gpu_memory',
  enrich: async (alert, ctx) => {
    const used = usedDefOnce(ctx.memory);
    // One list per group's settings: the kind's reads are planned once per list (signals/plan.ts).
    let defs = DEF_LISTS.get(used);
    if (!defs) {
      defs = ctx.memory.series === DCGM_FB_USED ? [used, GPU_MEMORY_TOTAL] : [used];
      DEF_LISTS.set(used, defs);
    }
    const { by, scope } = shapePeers(alert, ctx.peers, used.scopeLabels);
    const [signals, series] = await Promise.all([
      readSignals(ctx, alert, defs),
      ctx.range(rangeText(used, scope), ctx.memory.windowHours * 3600),
    ]);
    const total = signals.find((s) => s.name === GPU_MEMORY_TOTAL.name)?.value ?? null;
    const capacity = ctx.memory.capacityMiB ?? (total !== null && Number.isFinite(total) ? total : null);
    const points = itemsOf(series, alert, by)[0]?.points ?? [];
    const trend = fitMemoryTrend(points, capacity);
    return trend ? { signals, trend: { ...trend, series: ctx.memory.series } } : { signals };
  },
};
