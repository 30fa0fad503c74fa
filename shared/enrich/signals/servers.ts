/**
 * The servers an alert is about, as the label sets that locate them: what its GPUs are matched by
 * (`dcgm.ts`). An alert that names a pod is about that pod. Others are looked up in the engines' own
 * series: the shipped VLLMQueueBacklog and VLLMTimeToFirstTokenHigh keep only `model_name`, and an
 * alert by `instance` on Kubernetes carries the pod's IP, which dcgm-exporter's pod mapping never
 * does; the engine series selected by the alert's identifying labels carry the pod, its namespace
 * and the target's `instance` (`group by (…) (vllm:num_requests_running{model_name="…"})`), the same
 * on bare metal, where the instance's host then meets the GPUs'. One query per alert shape serves
 * all the alerts of a kind; an alert naming none of the engine labels, or whose lookup finds
 * nothing, keeps its own labels.
 */
import type { Alert } from '../../alertmanager/schema.js';
import type { Sample } from '../../prometheus/client.js';
import { aggregate, selector } from '../../prometheus/promql.js';
import type { EnrichContext } from '../enricher.js';
import { engineOf, type Engine } from '../engines.js';
import { itemsOf, shapePeers } from './read.js';
import { ENGINE_SERIES, VLLM_SCOPE_LABELS } from './scope.js';

/** A server's labels, as an alert's or as its engine series carry them. */
export type ServerLabels = Readonly<Record<string, string>>;

/** The labels that locate a server: its pod, the target, the node. */
const LOCATING = ['namespace', 'pod', 'instance', 'job', 'node', 'host', 'Hostname', 'hostname'] as const;

/**
 * A series every server of an engine exposes while it runs: where its alerts' servers are looked up
 * (its running-requests gauge; vLLM's in both engine generations).
 */
const PRESENCE: Readonly<Record<Engine, string>> = {
  vllm: 'vllm:num_requests_running',
  sglang: 'sglang:num_running_reqs',
  ray: 'ray_vllm_num_requests_running',
  ray_colon: 'ray_vllm:num_requests_running',
  nim: 'num_requests_running',
};

/** The key of an alert's lookup: its engine and the identifying labels it carries. */
const keyOf = (alert: Alert, by: readonly string[]) => `${engineOf(alert)}|${by.join(',')}`;

/** Whether the alert must be looked up: it names no pod, but some engine label that selects servers. */
const needsLookup = (alert: Alert): boolean =>
  !alert.labels.pod && VLLM_SCOPE_LABELS.some((name) => alert.labels[name] !== undefined);

/**
 * Looks up the servers of `peers` (one instant query per shape of identifying labels).
 * @returns for each peer (or any alert of the same shape), its servers' labels: the alert's own
 *   labels with each engine series' locating labels over them; `[alert.labels]` when it names a pod,
 *   names no engine label, or no engine series matches
 * @throws what a lookup query throws
 */
export async function lookUpServers(
  ctx: EnrichContext,
  peers: readonly Alert[],
): Promise<(alert: Alert) => ServerLabels[]> {
  const needing = peers.filter(needsLookup);
  const reads = new Map<string, { by: string[]; answer: Promise<Sample[]> }>();
  for (const alert of needing) {
    const { by, scope } = shapePeers(alert, needing, VLLM_SCOPE_LABELS);
    const key = keyOf(alert, by);
    if (reads.has(key)) continue;
    const present = selector(PRESENCE[engineOf(alert)], [...scope.matchers, ENGINE_SERIES]);
    const query = aggregate('group', [...new Set([...by, ...LOCATING])], present);
    reads.set(key, { by, answer: ctx.instant(query) });
  }
  const answers = new Map<string, { by: string[]; samples: Sample[] }>();
  for (const [key, read] of reads) answers.set(key, { by: read.by, samples: await read.answer });
  return (alert) => {
    if (!needsLookup(alert)) return [alert.labels];
    const by = VLLM_SCOPE_LABELS.filter((name) => alert.labels[name] !== undefined);
    const found = answers.get(keyOf(alert, by));
    const servers = found ? itemsOf(found.samples, alert, found.by) : [];
    return servers.length === 0 ? [alert.labels] : servers.map((s) => ({ ...alert.labels, ...s.metric }));
  };
}
