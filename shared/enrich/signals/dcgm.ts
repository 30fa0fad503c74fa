/**
 * GPU signals from NVIDIA dcgm-exporter, read for vLLM alerts: the exporter's series carry no
 * `model_name`/`engine`, so they are matched to the vLLM instance by what both sides carry, never
 * guessed:
 * - the pod: when the alert and a DCGM series both carry `pod` (dcgm-exporter's Kubernetes mapping
 *   puts the pod using the GPU on it), they must be equal (and `namespace`, when both carry it). When
 *   the scrape's own target labels took `pod`/`namespace` (the exporter's pod), Prometheus keeps the
 *   mapped ones as `exported_pod`/`exported_namespace`, which are then the ones compared;
 * - else the host: the node label of the series (`Hostname` before 2026, `hostname` since; in
 *   Kubernetes without pod mapping it names the exporter's pod, which matches no vLLM label) or the
 *   host part of its `instance`, against the alert's `Hostname`, `hostname`, `node` or `host` label
 *   or the host part of its `instance` (bare metal: both exporters scraped on one machine).
 * A host running several vLLM servers without pod mapping gives each server all of its GPUs.
 * No match (or no DCGM at all) is "no data": the rules that need the signal stay silent.
 * One query per signal serves all the alerts of a kind; the matching is done here, per alert.
 * @see https://docs.nvidia.com/datacenter/dcgm/latest/dcgm-api/dcgm-api-field-ids.html
 * @see https://github.com/NVIDIA/dcgm-exporter (default-counters.csv; `Hostname` → `hostname`, PR #736)
 */
import type { Alert } from '../../alertmanager/schema.js';
import type { Sample, Series } from '../../prometheus/client.js';
import { escapeRegex, quoteString } from '../../prometheus/promql.js';
import { RATE_WINDOW, type EnrichContext } from '../enricher.js';
import type { Signal, SignalUnit } from '../types.js';
import { isPeer, memo, ownStart, pointAt, readStarts, type StartRead } from './plan.js';

/** The alert labels that may name the vLLM server's machine. */
const ALERT_HOST_LABELS = ['Hostname', 'hostname', 'node', 'host'] as const;
/** dcgm-exporter's node label, both spellings. */
const DCGM_HOST_LABELS = ['Hostname', 'hostname'] as const;
/** Labels that tell one GPU (or MIG instance) apart, kept by the per-GPU aggregation. */
const GPU_IDENTITY = ['Hostname', 'hostname', 'instance', 'pod', 'namespace', 'exported_pod', 'exported_namespace', 'gpu', 'UUID', 'GPU_I_ID'] as const;

/** A DCGM signal: per-GPU values of `expr(selectors)`, combined over the GPUs matched to the alert. */
export interface GpuSignalDef {
  name: string;
  label: string;
  unit: SignalUnit;
  /**
   * PromQL per GPU; `select(metric)` gives the selectors of the metric's series that may belong to
   * the alerts (several, to be joined with `or`). Each result series keeps {@link GPU_IDENTITY}.
   */
  expr(select: (metric: string) => string[]): string;
  /** How the matched GPUs' values combine (`count`: how many GPUs matched). */
  combine: 'avg' | 'max' | 'count';
}

const perGpu = (inner: string) => `max by (${GPU_IDENTITY.join(', ')}) (${inner})`;
const anyOf = (selectors: readonly string[]) => selectors.join(' or ');

/**
 * GPU utilization, ratio 0–1 (`DCGM_FI_DEV_GPU_UTIL` is percent), the mean over the server's GPUs.
 * A MIG instance has no `DCGM_FI_DEV_GPU_UTIL`; its `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (ratio) stands in.
 */
export const GPU_UTILIZATION: GpuSignalDef = {
  name: 'gpu_utilization_ratio',
  label: 'GPU utilization',
  unit: 'ratio',
  combine: 'avg',
  expr: (select) => `${perGpu(`(${anyOf(select('DCGM_FI_DEV_GPU_UTIL'))}) / 100`)} or ${perGpu(anyOf(select('DCGM_FI_PROF_GR_ENGINE_ACTIVE')))}`,
};

/**
 * The last XID error code on any of the server's GPUs in the rate window (`DCGM_FI_DEV_XID_ERRORS`
 * holds the code of the last XID, 0 for none), unit `none`: e.g. 79 (fallen off the bus), 48 (double-bit ECC).
 * @see https://docs.nvidia.com/deploy/xid-errors/
 */
export const GPU_XID: GpuSignalDef = {
  name: 'gpu_xid_last',
  label: 'GPU XID error (last code)',
  unit: 'none',
  combine: 'max',
  expr: (select) => perGpu(anyOf(select('DCGM_FI_DEV_XID_ERRORS').map((s) => `max_over_time(${s}[${RATE_WINDOW}])`))),
};

/**
 * How many of the server's GPUs report to DCGM now (count; any framebuffer reading within the
 * lookback): fewer than the host has means a GPU dropped out (e.g. XID 79), none at all "no data".
 */
export const GPUS_REPORTING: GpuSignalDef = {
  name: 'gpus_reporting',
  label: 'GPUs reporting (DCGM)',
  unit: 'count',
  combine: 'count',
  expr: (select) => perGpu(anyOf(select('DCGM_FI_DEV_FB_USED'))),
};

/**
 * GPU memory used ÷ total per GPU (`DCGM_FI_DEV_FB_USED / (FB_USED + FB_FREE)`, both MiB), ratio 0–1;
 * the fullest of the server's GPUs: the one that runs out first fails the engine.
 */
export const GPU_MEMORY_USED_RATIO: GpuSignalDef = {
  name: 'gpu_memory_used_ratio',
  label: 'GPU memory used',
  unit: 'ratio',
  combine: 'max',
  expr: (select) => {
    const used = `(${anyOf(select('DCGM_FI_DEV_FB_USED'))})`;
    return perGpu(`${used} / (${used} + (${anyOf(select('DCGM_FI_DEV_FB_FREE'))}))`);
  },
};

/** The host part of an `instance` (`gpu-node-1:9400` → `gpu-node-1`, `[::1]:9400` → `::1`). */
export function hostOf(instance: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(instance);
  if (bracketed) return bracketed[1]!;
  return instance.split(':').length === 2 ? instance.replace(/:\d+$/, '') : instance;
}

/** The host names an alert's labels give its vLLM server. */
function alertHosts(labels: Readonly<Record<string, string>>): string[] {
  const named = ALERT_HOST_LABELS.map((n) => labels[n]).filter((v): v is string => !!v);
  return labels.instance ? [...named, hostOf(labels.instance)] : named;
}

/**
 * Whether a DCGM series belongs to the vLLM server the alert is about (see the file header).
 * @param series the series' labels; @param alert the alert's labels
 */
export function gpuBelongs(series: Readonly<Record<string, string>>, alert: Readonly<Record<string, string>>): boolean {
  const pod = series.exported_pod || series.pod;
  const namespace = series.exported_pod ? series.exported_namespace : series.namespace;
  if (pod && alert.pod) return pod === alert.pod && (!namespace || !alert.namespace || namespace === alert.namespace);
  const hosts = new Set(alertHosts(alert));
  const own = [...DCGM_HOST_LABELS.map((n) => series[n]), series.instance ? hostOf(series.instance) : undefined];
  return own.some((h) => h !== undefined && h !== '' && hosts.has(h));
}

/**
 * The selectors of `metric` covering the peers' pods and hosts (to be joined with `or`); empty when
 * the peers name neither.
 */
function selectorsFor(metric: string, peers: readonly Alert[]): string[] {
  return matchersFor(peers).map((m) => `${metric}{${m}}`);
}

/** The matchers of {@link selectorsFor}, the same for every metric. */
function matchersFor(peers: readonly Alert[]): string[] {
  const alt = (values: readonly string[]) => [...new Set(values)].sort().map(escapeRegex).join('|');
  const pods = peers.map((p) => p.labels.pod).filter((v): v is string => !!v);
  const hosts = peers.flatMap((p) => alertHosts(p.labels));
  const byHost = [...DCGM_HOST_LABELS.map((n) => `${n}=~${quoteString(alt(hosts))}`), `instance=~${quoteString(`\\[?(?:${alt(hosts)})\\]?(?::[0-9]+)?`)}`];
  const byPod = ['pod', 'exported_pod'].map((n) => `${n}=~${quoteString(alt(pods))}`);
  return [...(pods.length ? byPod : []), ...(hosts.length ? byHost : [])];
}

/** Samples by pod (mapped or own) and by host name, built once per answer so an alert's lookup does not scan it. */
const INDEXES = new WeakMap<readonly Sample[], Map<string, Sample[]>>();

function indexed(samples: readonly Sample[]): Map<string, Sample[]> {
  let index = INDEXES.get(samples);
  if (!index) {
    index = new Map();
    for (const sample of samples) {
      const m = sample.metric;
      const keys = [`pod:${m.exported_pod || m.pod || ''}`, ...[...DCGM_HOST_LABELS.map((n) => m[n]), m.instance ? hostOf(m.instance) : undefined].map((h) => `host:${h ?? ''}`)];
      for (const key of new Set(keys)) {
        const list = index.get(key);
        if (list) list.push(sample);
        else index.set(key, [sample]);
      }
    }
    INDEXES.set(samples, index);
  }
  return index;
}

const QUERIES = new WeakMap<readonly Alert[], Map<string, string | undefined>>();

/**
 * The query of `def` for `peers`, built once per peer list: selectors cover every peer, so building
 * them per alert would cost O(alerts²) time and memory in a storm. `undefined` when the peers name
 * neither a pod nor a host.
 */
function queryFor(def: GpuSignalDef, peers: readonly Alert[]): string | undefined {
  let queries = QUERIES.get(peers);
  if (!queries) {
    queries = new Map();
    QUERIES.set(peers, queries);
  }
  if (!queries.has(def.name)) {
    const selectors = (metric: string) => selectorsFor(metric, peers);
    queries.set(def.name, selectors('m').length === 0 ? undefined : def.expr(selectors));
  }
  return queries.get(def.name);
}

/**
 * The query a signal of `def` keeps for an alert read alone (see {@link readGpuSignals}), for
 * rebuilding a stored record's signal (`shared/enrich/stored.ts`).
 */
export const ownGpuQuery = (def: GpuSignalDef, alert: Alert): string => aloneQuery(def, alert) ?? def.expr((metric) => [metric]);

/**
 * What {@link queryFor} gives for `[alert]`, built directly: its memo is keyed by the peer list, and a
 * fresh one-element list per alert and signal never hits it (5,000 alerts: 5,000 memo entries and
 * sets, sorts and quoting per selector, for text used once). The matchers are built once per call.
 */
function aloneQuery(def: GpuSignalDef, alert: Alert): string | undefined {
  const matchers = matchersFor([alert]);
  return matchers.length === 0 ? undefined : def.expr((metric) => matchers.map((m) => `${metric}{${m}}`));
}

/** The combined value of the samples that belong to the alert; null when none does. */
function combined(samples: readonly Sample[] | undefined, alert: Alert, combine: GpuSignalDef['combine']): number | null {
  const index = indexed(samples ?? []);
  const keys = [...(alert.labels.pod ? [`pod:${alert.labels.pod}`] : []), ...alertHosts(alert.labels).map((h) => `host:${h}`)];
  const candidates = new Set(keys.flatMap((key) => index.get(key) ?? []));
  const values = [...candidates].filter((s) => gpuBelongs(s.metric, alert.labels)).map((s) => s.value);
  if (values.length === 0) return null;
  if (combine === 'count') return values.length;
  return combine === 'max' ? Math.max(...values) : values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * Reads `defs` for a vLLM alert from the DCGM series matched to its server (one query per signal and
 * time for all of `ctx.peers`, asked by the first alert and waited on once by all: `plan.ts`).
 * @returns one signal per def: the combined value now and when the alert fired; `null` ("no data")
 *   when no DCGM series matches, or the alert names neither a pod nor a host
 * @throws what the first of its queries to fail throws
 */
export async function readGpuSignals(ctx: EnrichContext, alert: Alert, defs: readonly GpuSignalDef[]): Promise<Signal[]> {
  const member = isPeer(alert, ctx.peers);
  const peers = member ? ctx.peers : [...ctx.peers, alert];
  const plan = member
    ? memo(
        memo(PLANS, ctx, () => new WeakMap()),
        defs,
        () => makePlan(ctx, peers, defs),
      )
    : makePlan(ctx, peers, defs);
  const start = ownStart(alert, ctx.now.getTime());
  const answers = await plan.answers(!Number.isNaN(start));
  // The alert's own matchers, for the query each signal keeps: built once for all its signals.
  const matchers = peers.length > 1 ? matchersFor([alert]) : undefined;
  return plan.reads.map((read, i): Signal => {
    const { def } = read;
    const base = { name: def.name, label: def.label, unit: def.unit };
    // Nothing to match a GPU by: no query, no data (the query shown is the fleet's, for a look by hand).
    if (read.query === undefined) return { ...base, value: null, atStart: null, query: def.expr((metric) => [metric]) };
    // Kept and shown: the alert's own query, not the group's (which names every peer's host).
    const own = matchers === undefined ? read.query : matchers.length === 0 ? read.query : def.expr((metric) => matchers.map((m) => `${metric}{${m}}`));
    const atStart = answers[2 * i + 1] as Sample[] | Series[] | undefined;
    return {
      ...base,
      value: combined(answers[2 * i] as Sample[], alert, def.combine),
      query: own,
      ...(atStart === undefined ? {} : { atStart: combined(startSamples(read.start, atStart, start), alert, def.combine) }),
    };
  });
}

/** One GPU signal's reads for a peer list: none when the peers name no pod or host. */
interface GpuRead {
  def: GpuSignalDef;
  query?: string;
  now?: Promise<Sample[]>;
  start: StartRead;
}

/** The reads of a list of GPU signals, and their answers (now, at the start), waited on once. */
interface GpuPlan {
  reads: GpuRead[];
  answers(withStart: boolean): Promise<unknown[]>;
}

const PLANS = new WeakMap<EnrichContext, WeakMap<readonly GpuSignalDef[], GpuPlan>>();

function makePlan(ctx: EnrichContext, peers: readonly Alert[], defs: readonly GpuSignalDef[]): GpuPlan {
  const reads = defs.map((def): GpuRead => {
    const query = queryFor(def, peers);
    return query === undefined ? { def, start: { kind: 'none' } } : { def, query, now: ctx.instant(query), start: readStarts(ctx, query, peers) };
  });
  const waits: Partial<Record<'with' | 'without', Promise<unknown[]>>> = {};
  return {
    reads,
    answers: (withStart) => (waits[withStart ? 'with' : 'without'] ??= Promise.all(reads.flatMap((r) => [r.now, withStart && r.start.kind !== 'none' ? r.start.answer : undefined]))),
  };
}

/** The samples of a start read's answer at the alert's own start (`startMs`): a range's point {@link pointAt} it. */
function startSamples(read: StartRead, answer: Sample[] | Series[], startMs: number): Sample[] {
  if (read.kind !== 'range') return answer as Sample[];
  return (answer as Series[]).flatMap(({ metric, points }) => {
    const point = pointAt(points, startMs / 1000);
    return point ? [{ metric, ...point }] : [];
  });
}
