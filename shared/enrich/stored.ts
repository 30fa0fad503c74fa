/**
 * The enrichment as an alert record stores it: each signal's PromQL text is left out when the
 * alert's own labels (and rule expression) rebuild exactly that text from the signal's definition.
 * The text is most of a record (a latency alert's 19 queries are ~4.5 KB of its ~6 KB: DynamoDB
 * write units on every record write, and memory in `npm start`'s embedded store); the definitions
 * are in the code that reads the record back.
 *
 * Exact by construction: a query is left out only when the rebuild gives the same text at the time
 * of writing, from the labels stored with it (`basis`, ~0.3 KB): a record's later writes replace its
 * alert (a resolve cut to fit, a re-fire after the rule was edited) but keep the firing's enrichment,
 * so the rebuild must not read the record's current alert. The rule's expression (`generatorURL`)
 * is not in the basis, so the rule's own query is always stored. Any other (a memory series that depends on settings, a group's query kept because the
 * alert alone names no host) is stored as before. Records written before this (every query stored)
 * read as they are. A chart URL minted earlier carries its own query, signed, and needs no record.
 */
import { alertExpression, type Alert } from '../alertmanager/schema.js';
import { stripTrailingComparison } from '../prometheus/promql.js';
import type { SignalDef } from './enricher.js';
import { ERROR_RATE_GPU_SIGNALS, ERROR_RATE_SIGNALS } from './kinds/error-rate.js';
import { GPU_MEMORY_TOTAL } from './kinds/gpu-memory.js';
import { KV_CACHE_GPU_SIGNALS, KV_CACHE_SIGNALS } from './kinds/kv-cache.js';
import { LATENCY_GPU_SIGNALS, LATENCY_SIGNALS } from './kinds/latency.js';
import { QUEUE_GPU_SIGNALS, QUEUE_SIGNALS } from './kinds/queue.js';
import { TARGET_DOWN_GPU_SIGNALS, TARGET_DOWN_SIGNALS } from './kinds/target-down.js';
import { ownGpuQuery, type GpuSignalDef } from './signals/dcgm.js';
import { ownQuery } from './signals/read.js';
import type { AlertKind, Enrichment, Signal } from './types.js';

/** A signal as stored: `query` absent when {@link rebuiltQuery} gives it. */
export type StoredSignal = Omit<Signal, 'query'> & { query?: string };

/** An enrichment as stored (see the file header); `basis`: the labels the left-out queries are rebuilt from. */
export type StoredEnrichment =
  | Exclude<Enrichment, { status: 'enriched' }>
  | (Omit<Extract<Enrichment, { status: 'enriched' }>, 'signals'> & {
      signals: StoredSignal[];
      basis?: Record<string, string>;
    });

type Rebuild = (alert: Alert) => string;

/** The alert a basis stands for: its labels and nothing else, so a rebuild can depend on nothing else. */
const basisAlert = (labels: Record<string, string>): Alert => ({
  status: 'firing',
  labels,
  annotations: {},
  startsAt: '',
  endsAt: '',
  generatorURL: '',
  fingerprint: '',
});

const vllm = (defs: readonly SignalDef[]) =>
  defs.map((def) => [def.name, (alert: Alert) => ownQuery(def, alert)] as const);
const gpu = (defs: readonly GpuSignalDef[]) =>
  defs.map((def) => [def.name, (alert: Alert) => ownGpuQuery(def, alert)] as const);

let rebuilds: ReadonlyMap<AlertKind, ReadonlyMap<string, Rebuild>> | undefined;

/** Signal name → its query's rebuild, per kind (built on first use: module load stays cheap). */
function rebuildsOf(kind: AlertKind): ReadonlyMap<string, Rebuild> | undefined {
  rebuilds ??= new Map<AlertKind, ReadonlyMap<string, Rebuild>>([
    ['latency', new Map([...vllm(LATENCY_SIGNALS), ...gpu(LATENCY_GPU_SIGNALS)])],
    ['kv_cache', new Map([...vllm(KV_CACHE_SIGNALS), ...gpu(KV_CACHE_GPU_SIGNALS)])],
    ['queue', new Map([...vllm(QUEUE_SIGNALS), ...gpu(QUEUE_GPU_SIGNALS)])],
    ['error_rate', new Map([...vllm(ERROR_RATE_SIGNALS), ...gpu(ERROR_RATE_GPU_SIGNALS)])],
    // The memory series' own signal depends on settings (series, unit), which may change: stored.
    ['gpu_memory', new Map(vllm([GPU_MEMORY_TOTAL]))],
    ['target_down', new Map([...vllm(TARGET_DOWN_SIGNALS), ...gpu(TARGET_DOWN_GPU_SIGNALS)])],
    [
      'unknown',
      new Map([['expression_value', (alert: Alert) => stripTrailingComparison(alertExpression(alert) ?? '')]]),
    ],
  ]);
  return rebuilds.get(kind);
}

/**
 * The query the code rebuilds for a signal of `kind` named `name` (a breakdown's or split's
 * `name:value` by its definition's `name`) for `alert`; `undefined` when no definition has that name.
 */
export function rebuiltQuery(kind: AlertKind, name: string, alert: Alert): string | undefined {
  const byName = rebuildsOf(kind);
  const colon = name.indexOf(':');
  const rebuild = byName?.get(name) ?? (colon > 0 ? byName?.get(name.slice(0, colon)) : undefined);
  return rebuild?.(alert);
}

/**
 * The enrichment to store with `alert`: signals whose query {@link rebuiltQuery} gives exactly from the
 * alert's labels lose it, and those labels are stored with them (`basis`).
 * @param alert the alert the enrichment was made for
 */
export function storedEnrichment(enrichment: Enrichment, alert: Alert): StoredEnrichment {
  if (enrichment.status !== 'enriched') return enrichment;
  const from = basisAlert(alert.labels);
  const signals = enrichment.signals.map((s): StoredSignal => {
    if (rebuiltQuery(enrichment.kind, s.name, from) !== s.query) return s;
    const { query: _rebuilt, ...rest } = s;
    return rest;
  });
  return signals.some((s) => s.query === undefined) ? { ...enrichment, signals, basis: alert.labels } : enrichment;
}

/**
 * The enrichment a record stored, each signal with its query (stored, else rebuilt from the stored
 * `basis`). A signal whose query is neither (a definition removed since the record was written) gets `''`.
 * @param alert the record's alert: the basis of a record written before `basis` was stored
 */
export function restoredEnrichment(stored: StoredEnrichment, alert: Alert): Enrichment {
  if (stored.status !== 'enriched') return stored;
  const { basis, ...rest } = stored;
  if (rest.signals.every((s) => s.query !== undefined)) return rest as Enrichment;
  const from = basis ? basisAlert(basis) : alert;
  const signals = rest.signals.map(
    (s): Signal =>
      s.query !== undefined ? (s as Signal) : { ...s, query: rebuiltQuery(rest.kind, s.name, from) ?? '' },
  );
  return { ...rest, signals };
}
