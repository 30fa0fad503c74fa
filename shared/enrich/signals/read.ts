/**
 * Reading signals for many alerts with few queries: one query per signal serves every peer alert of
 * the same kind that carries the same identifying label names, aggregated `by` those labels; each
 * alert then takes the series whose labels equal its own. The cost grows with kinds, not alerts,
 * and the work per alert stays constant (shapes, scopes and answers are indexed once per group).
 */
import type { Alert } from '../../alertmanager/schema.js';
import { aggregate, equalityMatchers, groupMatchers } from '../../prometheus/promql.js';
import type { Sample, Series } from '../../prometheus/client.js';
import type { EnrichContext, QueryScope, SignalDef } from '../enricher.js';
import type { Signal } from '../types.js';
import { isPeer, memo, ownStart, pointAt, readStarts, type StartRead } from './plan.js';

const SHAPES = new WeakMap<readonly Alert[], Map<string, { peers: Alert[]; scope: QueryScope }>>();
const INDEXES = new WeakMap<readonly object[], Map<string, Map<string, unknown[]>>>();

/**
 * The alert's peers with the same identifying label names as the alert (the alert included), and
 * the scope covering them, aggregated `by` those names. Computed once per peer list and shape.
 */
export function shapePeers(
  alert: Alert,
  peers: readonly Alert[],
  scopeLabels: readonly string[],
): { peers: Alert[]; by: string[]; scope: QueryScope } {
  const by = scopeLabels.filter((name) => alert.labels[name] !== undefined);
  const key = `${scopeLabels.join(',')}|${by.join(',')}`;
  const shapes = memo(SHAPES, peers, () => new Map());
  let shape = shapes.get(key);
  if (!shape) {
    const same = peers.filter((p) =>
      scopeLabels.every((name) => (p.labels[name] !== undefined) === (alert.labels[name] !== undefined)),
    );
    shape = { peers: same, scope: scopeFor(same.length ? same : [alert], by) };
    shapes.set(key, shape);
  }
  if (shape.peers.includes(alert)) return { peers: shape.peers, by, scope: shape.scope };
  const withAlert = [...shape.peers, alert];
  return { peers: withAlert, by, scope: scopeFor(withAlert, by) };
}

/** The query scope covering `peers`, aggregated by `by`. */
export function scopeFor(peers: readonly Alert[], by: readonly string[]): QueryScope {
  return {
    matchers: groupMatchers(
      peers.map((p) => p.labels),
      by,
    ),
    by: [...by],
  };
}

/** `def`'s query for a scope (a breakdown signal aggregated by its label as well). */
const exprFor = (def: SignalDef, scope: QueryScope): string =>
  def.expr(def.breakdown ? { ...scope, by: [...scope.by, def.breakdown] } : scope);

/**
 * The query a signal of `def` keeps for `alert` (its own series, not its group's): what
 * {@link readSignals} puts in `Signal.query`, and what a stored record's signal is rebuilt with
 * (`shared/enrich/stored.ts`).
 */
export function ownQuery(def: SignalDef, alert: Pick<Alert, 'labels'>): string {
  const by = def.scopeLabels.filter((name) => alert.labels[name] !== undefined);
  const parts = by.length === 0 ? undefined : ownTemplate(def, by);
  if (!parts) return exprFor(def, { matchers: groupMatchers([alert.labels], by), by });
  // One alert's group matchers are its equality matchers, in the order of `by`.
  return parts.join(equalityMatchers(alert.labels, by).join(','));
}

/**
 * Stands for an alert's matchers (joined with commas) in a definition's text: no PromQL we build
 * holds a NUL, and every definition uses its scope's matchers only joined into selectors.
 */
const MATCHERS_SLOT = '\u0000';
const TEMPLATES = new WeakMap<SignalDef, Map<string, string[] | null>>();

/**
 * `def`'s text for a one-alert scope aggregated `by`, cut where the alert's matchers go; built once
 * per definition and `by`. A storm's records keep 5,000 alerts × ~20 own queries, and building each
 * through the definition (sets, sorts, quoting of every part) was most of the enrichment's CPU and
 * garbage. `null` when the text holds a NUL of its own (a configured name): then it is built whole.
 */
function ownTemplate(def: SignalDef, by: readonly string[]): string[] | null {
  const templates = memo(TEMPLATES, def, () => new Map());
  const key = by.join(',');
  let parts = templates.get(key);
  if (parts === undefined) {
    const clean = !exprFor(def, { matchers: [''], by: [...by] }).includes(MATCHERS_SLOT);
    parts = clean ? exprFor(def, { matchers: [MATCHERS_SLOT], by: [...by] }).split(MATCHERS_SLOT) : null;
    templates.set(key, parts);
  }
  return parts;
}

/** The items of an answer (samples or series) that belong to the alert, through an index built once per answer and `by`. */
export function itemsOf<T extends { metric: Record<string, string> }>(
  items: readonly T[],
  alert: Pick<Alert, 'labels'>,
  by: readonly string[],
): T[] {
  return itemsByKey(items, by, by.join(','), keyOf(alert.labels, by));
}

/** {@link itemsOf} with the alert's {@link keyOf} and `by.join(',')` already made (once per alert and scope, not per answer). */
function itemsByKey<T extends { metric: Record<string, string> }>(
  items: readonly T[],
  by: readonly string[],
  byKey: string,
  key: string,
): T[] {
  if (items.length === 0) return [];
  const indexes = memo(INDEXES, items, () => new Map());
  let index = indexes.get(byKey);
  if (!index) {
    index = new Map();
    for (const item of items) {
      const itemKey = keyOf(item.metric, by);
      const list = index.get(itemKey);
      if (list) list.push(item);
      else index.set(itemKey, [item]);
    }
    indexes.set(byKey, index);
  }
  return (index.get(key) ?? []) as T[];
}

/**
 * A key of the values of `by` in `labels` (a missing label reads as empty), distinct for distinct
 * values: each value prefixed with its length (one label: the value itself), no arrays or JSON for
 * the ~500,000 series of a storm's answers.
 */
function keyOf(labels: Readonly<Record<string, string>>, by: readonly string[]): string {
  if (by.length === 1) return labels[by[0]!] ?? '';
  let key = '';
  for (const name of by) {
    const value = labels[name] ?? '';
    key += `${value.length}:${value}`;
  }
  return key;
}

/**
 * Reads `defs` for `alert` (identical queries of the group are sent once; the alerts of one shape share
 * one plan of reads and wait on it once: `plan.ts`).
 * @returns the signals in the order of `defs`, a breakdown signal expanded into one per label value
 *   (sorted), a split signal likewise when the alert's series hold several values of the split label
 *   (else the plain signal), each with its value now, when the alert fired, and for quantiles the top
 *   finite bucket (of its own split value)
 * @throws what the first of its queries to fail throws
 */
export async function readSignals(ctx: EnrichContext, alert: Alert, defs: readonly SignalDef[]): Promise<Signal[]> {
  const start = ownStart(alert, ctx.now.getTime());
  const plan = planFor(ctx, alert, defs);
  const answers = await plan.answers(!Number.isNaN(start));
  const own = ownReads(alert);
  return plan.reads.flatMap((read, i) => {
    const key = own.key(read);
    const startAnswer = answers[3 * i + 1] as Sample[] | Series[] | undefined;
    return signalsOf(read, {
      key,
      query: own.query(read),
      now: answers[3 * i] as Sample[],
      atStart: startAnswer === undefined ? undefined : startSamples(read, startAnswer, key, start),
      bounds: answers[3 * i + 2] as Sample[] | undefined,
    });
  });
}

/**
 * The alert's own side of a plan's reads, each made once per scope-label list (the same for most of
 * its signals): its query text ({@link ownQuery}) and its answers' index key ({@link keyOf}).
 */
function ownReads(alert: Alert): { query(read: DefRead): string; key(read: DefRead): string } {
  const matchers = new Map<readonly string[], string>();
  const keys = new Map<readonly string[], string>();
  const once = (made: Map<readonly string[], string>, read: DefRead, make: () => string): string => {
    let text = made.get(read.def.scopeLabels);
    if (text === undefined) {
      text = make();
      made.set(read.def.scopeLabels, text);
    }
    return text;
  };
  return {
    query: (read) => {
      if (!read.shared) return read.query;
      if (!read.template) return ownQuery(read.def, alert);
      return read.template.join(once(matchers, read, () => equalityMatchers(alert.labels, read.by).join(',')));
    },
    key: (read) => once(keys, read, () => keyOf(alert.labels, read.by)),
  };
}

/** One definition's answers as one alert reads them. */
interface AlertAnswer {
  /** The alert's {@link keyOf} for the read's `by`. */
  key: string;
  /** The alert's own query (`Signal.query`). */
  query: string;
  /** The group's answer now. */
  now: Sample[];
  /** The alert's own samples at its start; `undefined` when not read. */
  atStart: Sample[] | undefined;
  /** The group's bucket bounds (a quantile). */
  bounds: Sample[] | undefined;
}

/** One signal definition's reads for the alerts of one shape. */
interface DefRead {
  def: SignalDef;
  by: string[];
  /** `by.join(',')`: the answers' index key. */
  byKey: string;
  scope: QueryScope;
  /** The group's query (every peer of the shape). */
  query: string;
  /** Whether the shape holds several alerts: then each keeps its own query. */
  shared: boolean;
  /** The definition's text cut where an alert's matchers go ({@link ownTemplate}); `undefined` when it is built whole. */
  template?: string[] | null;
  now: Promise<Sample[]>;
  start: StartRead;
  bounds?: Promise<Sample[]>;
}

/** The reads of a list of definitions for one shape, and the answers, waited on once. */
interface Plan {
  reads: DefRead[];
  /** Per definition, in order: its answer now, at the start (`undefined` when not asked), its bucket bounds. */
  answers(withStart: boolean): Promise<unknown[]>;
}

const PLANS = new WeakMap<EnrichContext, WeakMap<readonly SignalDef[], Map<string, Plan>>>();
const UNIONS = new WeakMap<readonly SignalDef[], string[]>();

/**
 * The plan for the alert's shape: made by the first alert of that shape (its queries asked now, in
 * the order the per-alert reads asked them), then shared. An alert outside `ctx.peers` gets its own.
 */
function planFor(ctx: EnrichContext, alert: Alert, defs: readonly SignalDef[]): Plan {
  if (!isPeer(alert, ctx.peers)) return makePlan(ctx, alert, [...ctx.peers, alert], defs);
  const union = memo(UNIONS, defs, () => [...new Set(defs.flatMap((d) => d.scopeLabels))]);
  let shape = '';
  for (const name of union) shape += alert.labels[name] === undefined ? '0' : '1';
  const plans = memo(
    memo(PLANS, ctx, () => new WeakMap()),
    defs,
    () => new Map(),
  );
  let plan = plans.get(shape);
  if (!plan) {
    plan = makePlan(ctx, alert, ctx.peers, defs);
    plans.set(shape, plan);
  }
  return plan;
}

function makePlan(ctx: EnrichContext, alert: Alert, peers: readonly Alert[], defs: readonly SignalDef[]): Plan {
  const reads = defs.map((def): DefRead => {
    const { peers: same, by, scope } = shapePeers(alert, peers, def.scopeLabels);
    const query = textOnce(scope, def, () => exprFor(def, scope));
    const now = ctx.instant(query);
    const start = readStarts(ctx, query, same);
    const bounds = def.histogram ? ctx.instant(boundsQuery(def, def.histogram, scope)) : undefined;
    const template = same.length > 1 && by.length > 0 ? ownTemplate(def, by) : undefined;
    return { def, by, byKey: by.join(','), scope, query, shared: same.length > 1, template, now, start, bounds };
  });
  const waits: Partial<Record<'with' | 'without', Promise<unknown[]>>> = {};
  return {
    reads,
    answers: (withStart) =>
      (waits[withStart ? 'with' : 'without'] ??= Promise.all(
        reads.flatMap((r) => [r.now, withStart && r.start.kind !== 'none' ? r.start.answer : undefined, r.bounds]),
      )),
  };
}

/** The alert's samples (`key`: its {@link keyOf}) of a start read's answer, at its own start (`startMs`). */
function startSamples(read: DefRead, answer: Sample[] | Series[], key: string, startMs: number): Sample[] {
  if (read.start.kind !== 'range') return itemsByKey(answer as Sample[], read.by, read.byKey, key);
  const at = startMs / 1000;
  return itemsByKey(answer as Series[], read.by, read.byKey, key).flatMap(({ metric, points }) => {
    const point = pointAt(points, at);
    return point ? [{ metric, ...point }] : [];
  });
}

/** The signals of one definition for the alert, from its answers. */
function signalsOf(read: DefRead, answer: AlertAnswer): Signal[] {
  const { def } = read;
  const { atStart } = answer;
  const mine = itemsByKey(answer.now, read.by, read.byKey, answer.key);
  const bounds = answer.bounds && itemsByKey(answer.bounds, read.by, read.byKey, answer.key);
  const base = (pick: (s: { metric: Record<string, string> }) => boolean) =>
    fieldsOf(def, answer.query, bounds && topFinite(bounds.filter(pick)));
  const key = def.breakdown ?? def.split?.label;
  if (!key) {
    const start = atStart === undefined ? {} : { atStart: readingOf(def, atStart) };
    return [{ name: def.name, label: def.label, value: readingOf(def, mine), ...base(() => true), ...start }];
  }
  const values = [...new Set(mine.map((s) => s.metric[key] ?? ''))].sort();
  if (values.length === 0) return [{ name: def.name, label: def.label, value: null, ...base(() => true) }];
  return values.map((v) => {
    const pick = (s: { metric: Record<string, string> }) => (s.metric[key] ?? '') === v;
    // A split label read once is the plain signal: the split only keeps apart what must not be summed.
    const plain = def.split !== undefined && values.length === 1;
    return {
      name: plain ? def.name : `${def.name}:${v}`,
      label: plain ? def.label : `${def.label} (${def.split?.labels[v] ?? v})`,
      value: mine.find(pick)?.value ?? null,
      ...base(pick),
      ...startValue(atStart, pick),
    };
  });
}

/** What every signal of `def` carries: its unit, its own query, how to read NaN and elapsed time, its top bucket. */
function fieldsOf(def: SignalDef, query: string, topBucket: number | undefined) {
  return {
    unit: def.unit,
    query,
    ...(def.nanMeans ? { nanMeans: def.nanMeans } : {}),
    ...(def.elapsed && { elapsed: def.elapsed }),
    ...(topBucket !== undefined ? { topBucket } : {}),
  };
}

/** The reading of an alert's samples: the first's value, or for a {@link SignalDef.valueLabel} the largest number that label holds. */
function readingOf(def: SignalDef, samples: readonly Sample[]): number | null {
  const label = def.valueLabel;
  if (label === undefined) return samples[0]?.value ?? null;
  const numbers = samples.map((s) => Number(s.metric[label] ?? Number.NaN)).filter(Number.isFinite);
  return numbers.length ? Math.max(...numbers) : null;
}

/** `{ atStart }` from the alert's samples at its start, `{}` when that was not read. */
function startValue(samples: Sample[] | undefined, pick: (s: Sample) => boolean): { atStart?: number | null } {
  return samples === undefined ? {} : { atStart: samples.find(pick)?.value ?? null };
}

/** The query of the bucket bounds of `histograms` (either generation's name) for a scope: one sample per `le` (and split value). */
function boundsQuery(def: SignalDef, histograms: readonly string[], scope: QueryScope): string {
  return textOnce(scope, histograms, () => {
    const selectors = histograms
      .map((h) => (scope.matchers.length ? `${h}{${scope.matchers.join(',')}}` : h))
      .join(' or ');
    const by = def.split ? ['le', def.split.label, ...scope.by] : ['le', ...scope.by];
    return aggregate('count', by, def.split ? def.split.tag(selectors) : selectors);
  });
}

/** The highest finite `le` of bucket samples; `undefined` when there is none. */
function topFinite(samples: readonly Sample[]): number | undefined {
  const bounds = samples.map((s) => Number(s.metric.le)).filter(Number.isFinite);
  return bounds.length ? Math.max(...bounds) : undefined;
}

const TEXTS = new WeakMap<QueryScope, Map<object, string>>();

/**
 * A query's text for a scope, built once: a scope's matchers cover every peer alert, so building the
 * text per alert costs O(alerts²) time and memory in a storm (5,000 alerts × 100 KB of matchers), and
 * handing out one string object keeps the query cache's lookups cheap. Keyed by the definition (or
 * its histogram list): two engines' definitions of one signal share a name, never a text.
 */
function textOnce(scope: QueryScope, key: object, build: () => string): string {
  const texts = memo(TEXTS, scope, () => new Map());
  let text = texts.get(key);
  if (text === undefined) {
    text = build();
    texts.set(key, text);
  }
  return text;
}
