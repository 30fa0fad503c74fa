/**
 * What a Prometheus rule file's alerts can and cannot do here (`npm run check-rules -- <rules.yml>`):
 * per alerting rule, the names it reads that no known engine version exposes (such a rule, or the
 * part of it, can never fire), who exposes the others and since when (`catalog.ts`), what the
 * product recognises it as (its kind, the signals it reads, the causes it can name), and whether its
 * alerts can reach their servers' GPUs, from the labels its expression keeps. Pure: the script
 * reads the file and, with `PROMETHEUS_URL`, the series that exist now.
 * @see https://prometheus.io/docs/prometheus/latest/configuration/alerting_rules/
 */
import { parse } from 'yaml';
import { keptLabels, metricNames } from '../prometheus/metric-names.js';
import { lookUpName, type NameStatus } from './catalog.js';
import { CAUSE_RULES } from './causes/rules.js';
import { classifyAlert, KIND_ALIASES } from './classify.js';
import { ERROR_RATE_GPU_SIGNALS, ERROR_RATE_SIGNALS } from './kinds/error-rate.js';
import { GPU_MEMORY_TOTAL } from './kinds/gpu-memory.js';
import { KV_CACHE_GPU_SIGNALS, KV_CACHE_SIGNALS } from './kinds/kv-cache.js';
import { LATENCY_GPU_SIGNALS, LATENCY_SIGNALS } from './kinds/latency.js';
import { QUEUE_GPU_SIGNALS, QUEUE_SIGNALS } from './kinds/queue.js';
import { TARGET_DOWN_GPU_SIGNALS, TARGET_DOWN_SIGNALS } from './kinds/target-down.js';
import type { AlertKind } from './types.js';

/** One alerting rule, as the file writes it. */
interface AlertingRule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
}

/** What the check says of one alerting rule. */
export interface RuleReport {
  alert: string;
  group: string;
  kind: AlertKind;
  /** Where the kind came from. */
  kindFrom: 'its kind label' | 'the metrics it reads' | 'its alert name' | 'nothing';
  /** Every metric name the expression reads, with the catalog's word on it. */
  names: Array<{ name: string } & NameStatus>;
  /** The labels its alerts carry from the series (`all`: the series' own). */
  keeps: string[] | 'all';
  /** How its alerts reach their GPUs, or why they cannot; absent for kinds that read no GPU. */
  gpu?: { reached: boolean; how: string };
  /** The labels of the signals its kind reads. */
  signals: string[];
  /** The likely causes its kind can name (rule ids). */
  causes: string[];
  /**
   * It can never fire on an engine's series: every engine name it reads is one no known version
   * exposes, or (an expression without `or` or `absent`, where one missing operand empties it) one
   * of them is. `router`: what is missing is exposed by production-stack's router only.
   */
  neverFires: false | 'unknown' | 'router';
}

/** A GPU signal's label, marked as dcgm-exporter's. */
const dcgm = (s: { label: string }) => (s.label.includes('DCGM') ? s.label : `${s.label} (DCGM)`);

/** The signals each kind reads, by label (GPU ones marked). */
const SIGNALS: Readonly<Record<AlertKind, readonly string[]>> = {
  latency: [...LATENCY_SIGNALS.map((s) => s.label), ...LATENCY_GPU_SIGNALS.map(dcgm)],
  kv_cache: [...KV_CACHE_SIGNALS.map((s) => s.label), ...KV_CACHE_GPU_SIGNALS.map(dcgm)],
  queue: [...QUEUE_SIGNALS.map((s) => s.label), ...QUEUE_GPU_SIGNALS.map(dcgm)],
  error_rate: [...ERROR_RATE_SIGNALS.map((s) => s.label), ...ERROR_RATE_GPU_SIGNALS.map(dcgm)],
  target_down: [...TARGET_DOWN_SIGNALS.map((s) => s.label), ...TARGET_DOWN_GPU_SIGNALS.map(dcgm)],
  gpu_memory: ['Memory used (the memory series)', GPU_MEMORY_TOTAL.label, 'Memory trend and forecast'],
  unknown: ["The rule's own expression"],
};

/** Labels that name a server's pod, its target, or its engine: what its servers are looked up by. */
const SERVER_LABELS = ['model_name', 'instance', 'job', 'namespace', 'engine'] as const;
const HOST_LABELS = ['node', 'host', 'Hostname', 'hostname'] as const;
const GPU_LABELS = ['gpu', 'UUID', 'GPU_I_ID', 'Hostname', 'hostname', 'instance', 'pod'] as const;

/** How alerts keeping `keeps` reach their GPUs (kinds that read DCGM for a server). */
function serverGpus(keeps: string[] | 'all'): { reached: boolean; how: string } {
  if (keeps === 'all') return { reached: true, how: "by its series' own labels (pod, else the instance's host)" };
  if (keeps.includes('pod')) return { reached: true, how: 'by its pod' };
  const servers = SERVER_LABELS.filter((l) => keeps.includes(l));
  if (servers.length)
    return { reached: true, how: `through the servers its ${servers.join(', ')} select (their pods or hosts)` };
  const hosts = HOST_LABELS.filter((l) => keeps.includes(l));
  if (hosts.length) return { reached: true, how: `by its host (${hosts.join(', ')})` };
  return {
    reached: false,
    how: 'cannot reach its GPUs: its alerts carry none of pod, instance, model_name, job, namespace; keep one in its `by (…)`',
  };
}

/** How a memory alert keeping `keeps` picks its GPUs. */
function memoryGpus(keeps: string[] | 'all'): { reached: boolean; how: string } {
  if (keeps === 'all') return { reached: true, how: "each GPU by its series' own labels" };
  const kept = GPU_LABELS.filter((l) => keeps.includes(l));
  return kept.length
    ? { reached: true, how: `the GPUs its ${kept.join(', ')} select` }
    : { reached: false, how: 'sums every GPU its expression reads: keep gpu and Hostname/hostname (or UUID)' };
}

/** The kind of a rule's alerts and where it came from, as `classifyAlert` decides it. */
function kindOf(rule: AlertingRule): Pick<RuleReport, 'kind' | 'kindFrom'> {
  const url = new URL('http://prometheus.invalid/graph');
  url.searchParams.set('g0.expr', rule.expr);
  const labels: Record<string, string> = { alertname: rule.alert, ...(rule.labels ?? {}) };
  const kind = classifyAlert({ labels, generatorURL: url.toString() });
  const label = labels.kind?.trim().toLowerCase();
  if (label !== undefined && KIND_ALIASES.get(label) === kind) return { kind, kindFrom: 'its kind label' };
  if (classifyAlert({ labels: {}, generatorURL: url.toString() }) === kind && kind !== 'unknown')
    return { kind, kindFrom: 'the metrics it reads' };
  return { kind, kindFrom: kind === 'unknown' ? 'nothing' : 'its alert name' };
}

/** Whether one operand missing empties `expr` (no `or` to fall back on, no `absent` that fires on missing). */
const needsEveryOperand = (expr: string): boolean => !/or|absent(?:_over_time)?\s*\(/i.test(expr);

/** Why a rule reading `names` can never fire on an engine's series, or `false`. */
function neverFires(expr: string, names: RuleReport['names']): RuleReport['neverFires'] {
  const own = names.filter((n) => n.status !== 'foreign');
  const missing = own.filter((n) => n.status === 'unknown' || n.status === 'router');
  if (missing.length === 0 || (missing.length < own.length && !needsEveryOperand(expr))) return false;
  return missing.some((n) => n.status === 'unknown') ? 'unknown' : 'router';
}

/** The report of one alerting rule. */
function checkRule(rule: AlertingRule, group: string): RuleReport {
  const { kind, kindFrom } = kindOf(rule);
  const names = metricNames(rule.expr).map((name) => ({ name, ...lookUpName(name) }));
  const keeps = keptLabels(rule.expr);
  const gpu =
    kind === 'gpu_memory'
      ? memoryGpus(keeps)
      : kind === 'unknown'
        ? undefined
        : kind === 'target_down' && keeps !== 'all' && !keeps.includes('instance')
          ? { reached: false, how: 'cannot reach its host: keep instance' }
          : serverGpus(keeps);
  return {
    alert: rule.alert,
    group,
    kind,
    kindFrom,
    names,
    keeps,
    ...(gpu ? { gpu } : {}),
    signals: [...SIGNALS[kind]],
    causes: CAUSE_RULES.filter((r) => r.kinds.includes(kind)).map((r) => r.id),
    neverFires: neverFires(rule.expr, names),
  };
}

/**
 * Checks every alerting rule of a Prometheus rule file (recording rules are skipped).
 * @param text the file's YAML (`groups: [{ name, rules: [{ alert, expr, labels }] }]`)
 * @throws Error naming what is wrong when the text is not a rule file
 */
export function checkRuleFile(text: string): RuleReport[] {
  const doc = parse(text) as { groups?: Array<{ name?: string; rules?: Array<Partial<AlertingRule>> }> } | null;
  if (!doc || !Array.isArray(doc.groups)) throw new Error('not a Prometheus rule file: no `groups` list');
  return doc.groups.flatMap((g) =>
    (g.rules ?? []).flatMap((r) =>
      typeof r.alert === 'string' && typeof r.expr === 'string'
        ? [checkRule({ alert: r.alert, expr: r.expr, ...(r.labels ? { labels: r.labels } : {}) }, g.name ?? '')]
        : [],
    ),
  );
}

/**
 * The report as lines of text, one block per rule.
 * @param seriesNow series per metric name existing now (from `PROMETHEUS_URL`); absent: not asked
 */
export function formatRuleReports(reports: readonly RuleReport[], seriesNow?: ReadonlyMap<string, number>): string[] {
  return reports.flatMap((r) => {
    const lines = [`${r.alert} (group ${r.group})`];
    if (r.neverFires === 'unknown') lines.push('  NEVER FIRES: it needs a name no known engine version exposes');
    if (r.neverFires === 'router')
      lines.push("  NEVER FIRES on vLLM engines: it needs a name only production-stack's router exposes");
    for (const n of r.names) {
      const now = seriesNow ? `; ${seriesNow.get(n.name) ?? 0} series now` : '';
      if (n.status === 'unknown') lines.push(`  ✗ ${n.name}: no known engine version exposes it${now}`);
      else if (n.status === 'router')
        lines.push(`  ✗ ${n.name}: no vLLM engine exposes it; ${n.exposers.map((e) => e.note).join('; ')}${now}`);
      else if (n.status === 'foreign') lines.push(`  · ${n.name}: not an engine's metric (not checked)${now}`);
      else {
        const by = n.exposers.map((e) => `${e.by} ${e.since}${e.note ? ` (${e.note})` : ''}`).join('; ');
        lines.push(`  ✓ ${n.name}: ${by}${now}`);
      }
    }
    lines.push(`  kind: ${r.kind} (from ${r.kindFrom})`);
    lines.push(`  its alerts carry: ${r.keeps === 'all' ? "its series' labels" : r.keeps.join(', ') || 'no label'}`);
    if (r.gpu) lines.push(`  GPU: ${r.gpu.reached ? '' : '✗ '}${r.gpu.how}`);
    lines.push(`  signals: ${r.signals.join(', ')}`);
    lines.push(`  causes it can name: ${r.causes.join(', ') || 'none'}`);
    return lines;
  });
}
