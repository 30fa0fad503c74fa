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
 * The alert's servers are found first (`servers.ts`): an alert by model or by a pod's IP reaches
 * the pods behind it. A host running several vLLM servers without pod mapping gives each server all
 * of its GPUs that hold memory (an idle, empty GPU beside the server is left out), and the signal's
 * label says it is the host's average. A GPU's series are read as one device: dcgm-exporter's
 * per-process series (`--kubernetes-virtual-gpus`) beside the device series are the device's for a
 * pod that owns one of them, and never summed with it.
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
import { asked, isPeer, memo, ownStart, pointAt, readStarts, type StartRead } from './plan.js';
import { lookUpServers, type ServerLabels } from './servers.js';

/** The alert labels that may name the vLLM server's machine. */
const ALERT_HOST_LABELS = ['Hostname', 'hostname', 'node', 'host'] as const;
/** dcgm-exporter's node label, both spellings. */
const DCGM_HOST_LABELS = ['Hostname', 'hostname'] as const;
/** Labels that tell one GPU (or MIG instance) apart, kept by the per-GPU aggregation. */
const GPU_IDENTITY = [
  'Hostname',
  'hostname',
  'instance',
  'pod',
  'namespace',
  'exported_pod',
  'exported_namespace',
  'gpu',
  'UUID',
  'GPU_I_ID',
] as const;

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
 * Framebuffer in use below which a GPU runs no model server, MiB: an engine holds its weights and
 * KV cache for its whole life (GiBs), an idle GPU a few MiB (dcgm-exporter reads 3 on an empty MIG slice).
 */
export const EMPTY_GPU_MIB = 1024;

/**
 * GPU utilization, ratio 0–1 (`DCGM_FI_DEV_GPU_UTIL` is percent), the mean over the server's GPUs.
 * A MIG instance has no `DCGM_FI_DEV_GPU_UTIL`; its `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (ratio) stands in.
 * A GPU holding less than {@link EMPTY_GPU_MIB} runs no server and is left out (an idle GPU beside a
 * bare-metal server would halve its reading).
 */
export const GPU_UTILIZATION: GpuSignalDef = {
  name: 'gpu_utilization_ratio',
  label: 'GPU utilization',
  unit: 'ratio',
  combine: 'avg',
  expr: (select) =>
    `(${perGpu(`(${anyOf(select('DCGM_FI_DEV_GPU_UTIL'))}) / 100`)} or ${perGpu(anyOf(select('DCGM_FI_PROF_GR_ENGINE_ACTIVE')))}) unless ${perGpu(`(${anyOf(select('DCGM_FI_DEV_FB_USED'))}) < ${EMPTY_GPU_MIB}`)}`,
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
  // A server whose labels name its GPU (a target label set from CUDA_VISIBLE_DEVICES) has that GPU only.
  if (alert.UUID && series.UUID && alert.UUID !== series.UUID) return false;
  const pod = series.exported_pod || series.pod;
  const namespace = series.exported_pod ? series.exported_namespace : series.namespace;
  if (pod && alert.pod) return pod === alert.pod && (!namespace || !alert.namespace || namespace === alert.namespace);
  const hosts = new Set(alertHosts(alert));
  const own = [...DCGM_HOST_LABELS.map((n) => series[n]), series.instance ? hostOf(series.instance) : undefined];
  return own.some((h) => h !== undefined && h !== '' && hosts.has(h));
}

/** The matchers covering the servers' pods and hosts (one selector each, to be joined with `or`); empty when they name neither. */
function matchersFor(servers: readonly ServerLabels[]): string[] {
  const alt = (values: readonly string[]) => [...new Set(values)].sort().map(escapeRegex).join('|');
  const pods = servers.map((p) => p.pod).filter((v): v is string => !!v);
  const hosts = servers.flatMap((p) => alertHosts(p));
  const byHost = [
    ...DCGM_HOST_LABELS.map((n) => `${n}=~${quoteString(alt(hosts))}`),
    `instance=~${quoteString(`\\[?(?:${alt(hosts)})\\]?(?::[0-9]+)?`)}`,
  ];
  const byPod = ['pod', 'exported_pod'].map((n) => `${n}=~${quoteString(alt(pods))}`);
  return [...(pods.length ? byPod : []), ...(hosts.length ? byHost : [])];
}

/** `def`'s query over `matchers` (see {@link matchersFor}); `undefined` when there are none. */
const queryOver = (def: GpuSignalDef, matchers: readonly string[]): string | undefined =>
  matchers.length === 0 ? undefined : def.expr((metric) => matchers.map((m) => `${metric}{${m}}`));

/** Samples by pod (mapped or own) and by host name, built once per answer so an alert's lookup does not scan it. */
const INDEXES = new WeakMap<readonly Sample[], Map<string, Sample[]>>();

function indexed(samples: readonly Sample[]): Map<string, Sample[]> {
  let index = INDEXES.get(samples);
  if (!index) {
    index = new Map();
    for (const sample of samples) {
      const m = sample.metric;
      const keys = [
        `pod:${m.exported_pod || m.pod || ''}`,
        ...[...DCGM_HOST_LABELS.map((n) => m[n]), m.instance ? hostOf(m.instance) : undefined].map(
          (h) => `host:${h ?? ''}`,
        ),
      ];
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

/**
 * The query a signal of `def` keeps for an alert read alone, its own labels naming its server (see
 * {@link readGpuSignals}), for rebuilding a stored record's signal (`shared/enrich/stored.ts`).
 */
export const ownGpuQuery = (def: GpuSignalDef, alert: Alert): string =>
  queryOver(def, matchersFor([alert.labels])) ?? def.expr((metric) => [metric]);

/** One GPU (or MIG instance) of a host, whichever pod labels its series carry. */
const deviceOf = (m: Readonly<Record<string, string>>): string =>
  `${m.Hostname || m.hostname || hostOf(m.instance ?? '')}|${m.UUID || m.gpu || ''}|${m.GPU_I_ID ?? ''}`;

/** The series' pod: dcgm-exporter's mapping, kept as `exported_pod` when the scrape's labels took `pod`. */
const podOf = (m: Readonly<Record<string, string>>): string | undefined => m.exported_pod || m.pod || undefined;

/**
 * The combined value of the samples that belong to the servers, and whether they were matched by
 * host only (then the servers' own GPUs are not known: the host's GPUs stand for them); value null
 * when none belongs. A device's several series (per-process beside the device's) read as one: the
 * series of a server's pod, else the device's own (no pod), else the largest.
 */
function combined(
  samples: readonly Sample[] | undefined,
  servers: readonly ServerLabels[],
  combine: GpuSignalDef['combine'],
): { value: number | null; byHost: boolean } {
  const index = indexed(samples ?? []);
  const keys = servers.flatMap((t) => [...(t.pod ? [`pod:${t.pod}`] : []), ...alertHosts(t).map((h) => `host:${h}`)]);
  const candidates = new Set(keys.flatMap((key) => index.get(key) ?? []));
  const pods = new Set(servers.map((t) => t.pod).filter((p): p is string => !!p));
  const devices = new Map<string, Sample[]>();
  for (const s of candidates) {
    if (!servers.some((t) => gpuBelongs(s.metric, t))) continue;
    const key = deviceOf(s.metric);
    devices.set(key, [...(devices.get(key) ?? []), s]);
  }
  let byHost = true;
  const values = [...devices.values()].map((series) => {
    const own = series.filter((s) => pods.has(podOf(s.metric) ?? ''));
    if (own.length) byHost = false;
    const device = series.filter((s) => !podOf(s.metric));
    const pick = own.length ? own : device.length ? device : series;
    return Math.max(...pick.map((s) => s.value));
  });
  if (values.length === 0) return { value: null, byHost: false };
  if (combine === 'count') return { value: values.length, byHost };
  const value = combine === 'max' ? Math.max(...values) : values.reduce((a, b) => a + b, 0) / values.length;
  return { value, byHost };
}

/** Text after a signal's label when its GPUs were matched by host: the host's GPUs stand for the server's. */
export const HOST_AVERAGE = ' (host average)';

/**
 * Reads `defs` for a vLLM alert from the DCGM series matched to its servers (one lookup of the
 * servers and one query per signal and time for all of `ctx.peers`, asked by the first alert and
 * waited on once by all: `plan.ts`).
 * @returns one signal per def: the combined value now and when the alert fired; `null` ("no data")
 *   when no DCGM series matches, or the alert's servers name neither a pod nor a host; an average
 *   over a host's GPUs says so in its label
 * @throws what the first of its queries to fail throws
 */
export async function readGpuSignals(
  ctx: EnrichContext,
  alert: Alert,
  defs: readonly GpuSignalDef[],
): Promise<Signal[]> {
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
  const { reads, answers, serversOf } = await plan.answers(!Number.isNaN(start));
  const servers = serversOf(alert);
  // The alert's own matchers, for the query each signal keeps: built once for all its signals.
  const matchers = matchersFor(servers);
  return reads.map((read, i): Signal => {
    const { def } = read;
    const base = { name: def.name, label: def.label, unit: def.unit };
    const own = queryOver(def, matchers);
    // Nothing to match a GPU by: no data (the query shown is the fleet's, for a look by hand).
    if (read.query === undefined || own === undefined)
      return { ...base, value: null, atStart: null, query: def.expr((metric) => [metric]) };
    const now = combined(answers[2 * i] as Sample[], servers, def.combine);
    const atStart = answers[2 * i + 1] as Sample[] | Series[] | undefined;
    return {
      ...base,
      ...(now.byHost && def.combine === 'avg' ? { label: `${def.label}${HOST_AVERAGE}` } : {}),
      value: now.value,
      // Kept and shown: the alert's own query, not the group's (which names every peer's servers).
      query: read.shared ? own : read.query,
      ...(atStart === undefined
        ? {}
        : { atStart: combined(startSamples(read.start, atStart, start), servers, def.combine).value }),
    };
  });
}

/** One GPU signal's reads for a peer list: none when their servers name no pod or host. */
interface GpuRead {
  def: GpuSignalDef;
  query?: string;
  /** Whether the query covers several alerts' servers (then each alert keeps its own). */
  shared: boolean;
  now?: Promise<Sample[]>;
  start: StartRead;
}

/** What a plan's reads answered: per def, its answer now and at the start; and each alert's servers. */
interface GpuAnswers {
  reads: GpuRead[];
  answers: unknown[];
  serversOf(alert: Alert): ServerLabels[];
}

/** The reads of a list of GPU signals, made once the peers' servers are known, and their answers, waited on once. */
interface GpuPlan {
  answers(withStart: boolean): Promise<GpuAnswers>;
}

const PLANS = new WeakMap<EnrichContext, WeakMap<readonly GpuSignalDef[], GpuPlan>>();

/**
 * The plan's reads: asked at once with the peers' own labels (in the same round as the servers'
 * lookup and the kind's other queries), and asked again only when the lookup found servers those
 * labels do not name (a model-wide alert's pods, a pod behind an `instance`): an alert that names
 * its pod or host costs one round, as before the lookup existed.
 */
function makePlan(ctx: EnrichContext, peers: readonly Alert[], defs: readonly GpuSignalDef[]): GpuPlan {
  const readsOver = (matchers: readonly string[]) =>
    defs.map((def): GpuRead => {
      const query = queryOver(def, matchers);
      return query === undefined
        ? { def, shared: false, start: { kind: 'none' } }
        : {
            def,
            query,
            shared: peers.length > 1,
            now: asked(ctx.instant(query)),
            start: readStarts(ctx, query, peers),
          };
    });
  const own = matchersFor(peers.map((p) => p.labels));
  const first = readsOver(own);
  const planned = asked(
    lookUpServers(ctx, peers).then((serversOf) => {
      const matchers = matchersFor(peers.flatMap(serversOf));
      const same = matchers.length === own.length && matchers.every((m, i) => m === own[i]);
      return { reads: same ? first : readsOver(matchers), serversOf };
    }),
  );
  const waits: Partial<Record<'with' | 'without', Promise<GpuAnswers>>> = {};
  return {
    answers: (withStart) =>
      (waits[withStart ? 'with' : 'without'] ??= planned.then(async ({ reads, serversOf }) => ({
        reads,
        serversOf,
        answers: await Promise.all(
          reads.flatMap((r) => [r.now, withStart && r.start.kind !== 'none' ? r.start.answer : undefined]),
        ),
      }))),
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
