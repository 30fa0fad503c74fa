/** Evaluates the likely-cause rules (`rules.ts`) on what enrichment gathered. Pure. */
import { lazy } from '../../core/lazy.js';
import type { Locale } from '../../core/locale.js';
import { EN_TREND_WORDS, formatMemoryTrend, formatSignalValue, ZH_TREND_WORDS, type TrendWords } from '../values.js';
import { signalLabel } from '../signals/labels.js';
import { CAUSE_RULES, type Comparison, type Condition, type CauseRule } from './rules.js';
import type { AlertKind, LikelyCause, MemoryTrend, Signal } from '../types.js';
import type { Engine } from '../engines.js';

/** The words of the evidence lines, per language (numbers and units are the same in both). */
export interface EvidenceWords {
  label(signal: Signal): string;
  /** A change since the alert fired: `Generation tokens 1,200/s → 1,210/s since fired` (values formatted). */
  sinceFired(label: string, then: string, now: string): string;
  /** The trend's line: `Memory trend +800 MiB/h · …`. */
  trend(line: string): string;
  trendWords: TrendWords;
  /** Between the value and the bound: ` (≥ 90%)` / `（≥ 90%）`. */
  bound(text: string): string;
}

const EVIDENCE_WORDS: Readonly<Record<Locale, EvidenceWords>> = {
  en: {
    label: (s) => s.label,
    sinceFired: (label, then, now) => `${label} ${then} → ${now} since fired`,
    trend: (line) => `Memory trend ${line}`,
    trendWords: EN_TREND_WORDS,
    bound: (text) => ` (${text})`,
  },
  'zh-CN': {
    label: (s) => signalLabel(s, 'zh-CN'),
    sinceFired: (label, then, now) => `${label} 触发时 ${then} → 现在 ${now}`,
    trend: (line) => `显存趋势 ${line}`,
    trendWords: ZH_TREND_WORDS,
    bound: (text) => `（${text}）`,
  },
};

/** What the rules look at. */
export interface Facts {
  signals: readonly Signal[];
  trend?: MemoryTrend;
  /** The alert's serving engine: its own flags in the action (default vLLM's). */
  engine?: Engine;
}

/** A ratio between two values: `8`, `1.01`, `12.5`. */
// Built on first use, not at import (ICU data; Lambda cold init, see shared/core/lazy.ts).
const timesFormat = lazy(() => new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }));
const TIMES = { format: (n: number) => timesFormat().format(n) };

const SYMBOL: Readonly<Record<Comparison, string>> = { '>=': '≥', '>': '>', '<=': '≤', '<': '<' };

const COMPARE: Readonly<Record<Comparison, (a: number, b: number) => boolean>> = {
  '>=': (a, b) => a >= b,
  '>': (a, b) => a > b,
  '<=': (a, b) => a <= b,
  '<': (a, b) => a < b,
};

/**
 * The evidence for one condition, or `undefined` when it does not hold. A signal absent from the
 * facts, with no data (`null`) or NaN never holds (nor does a comparison with such a signal, or a
 * change since the alert fired when the value then is unknown or 0).
 * @example checkCondition({ signal: 'kv_cache_usage_ratio', op: '>=', value: 0.9 }, facts) // 'KV cache usage 97% (≥ 90%)'
 * @example checkCondition({ signal: 'e2e_p99_seconds', op: '>=', value: 5, of: 'e2e_p50_seconds' }, facts) // 'E2E latency p99 32.0 s = 8× E2E latency p50 4.00 s (≥ 5×)'
 * @example checkCondition({ signal: 'generation_tokens_per_second', op: '<=', value: 1.1, sinceFired: true }, facts) // 'Generation tokens 1,200/s → 1,210/s since fired (×1.01, ≤ ×1.1)'
 */
export function checkCondition(
  condition: Condition,
  facts: Facts,
  words: EvidenceWords = EVIDENCE_WORDS.en,
): string | undefined {
  if ('trend' in condition) {
    return facts.trend?.growing ? words.trend(formatMemoryTrend(facts.trend, words.trendWords)) : undefined;
  }
  if ('any' in condition) {
    for (const c of condition.any) {
      const evidence = checkCondition(c, facts, words);
      if (evidence !== undefined) return evidence;
    }
    return undefined;
  }
  const signal = find(facts, condition.signal);
  if (!signal) return undefined;
  const value = signal.value as number;
  const shown = `${words.label(signal)} ${formatSignalValue(value, signal.unit)}`;
  if ('of' in condition) return relativeTo(condition, { signal, shown }, facts, words);
  if ('sinceFired' in condition) return sinceFired(condition, signal, words);
  if (!COMPARE[condition.op](value, condition.value)) return undefined;
  return `${shown}${words.bound(`${SYMBOL[condition.op]} ${formatSignalValue(condition.value, signal.unit)}`)}`;
}

/** The signal named `name` when it has a finite value or ±Infinity now; `undefined` without data. */
function find(facts: Facts, name: string): Signal | undefined {
  const signal = facts.signals.find((s) => s.name === name);
  const value = signal?.value;
  return value === null || value === undefined || Number.isNaN(value) ? undefined : signal;
}

/** `value` × the other signal, compared: both must have a finite value, the other a positive one. */
function relativeTo(
  condition: Extract<Condition, { of: string }>,
  { signal, shown }: { signal: Signal; shown: string },
  facts: Facts,
  words: EvidenceWords,
): string | undefined {
  const other = find(facts, condition.of);
  const base = other?.value;
  if (
    !other ||
    base === null ||
    base === undefined ||
    !(base > 0) ||
    !Number.isFinite(base) ||
    !Number.isFinite(signal.value!)
  )
    return undefined;
  const times = signal.value! / base;
  if (!COMPARE[condition.op](times, condition.value)) return undefined;
  const bound = words.bound(`${SYMBOL[condition.op]} ${TIMES.format(condition.value)}×`);
  return `${shown} = ${TIMES.format(times)}× ${words.label(other)} ${formatSignalValue(base, other.unit)}${bound}`;
}

/** The value now ÷ the value when the alert fired, compared; the value then must be known and positive. */
function sinceFired(
  condition: Extract<Condition, { sinceFired: true }>,
  signal: Signal,
  words: EvidenceWords,
): string | undefined {
  const then = signal.atStart;
  if (then === null || then === undefined || !(then > 0) || !Number.isFinite(then) || !Number.isFinite(signal.value!))
    return undefined;
  const times = signal.value! / then;
  if (!COMPARE[condition.op](times, condition.value)) return undefined;
  const label = words.sinceFired(
    words.label(signal),
    formatSignalValue(then, signal.unit),
    formatSignalValue(signal.value, signal.unit),
  );
  return `${label}${words.bound(`×${TIMES.format(times)}, ${SYMBOL[condition.op]} ×${TIMES.format(condition.value)}`)}`;
}

/**
 * The first rule of `rules` for `kind` whose conditions all hold.
 * @returns the cause with its evidence (one line per condition), or `undefined` when no rule holds
 */
export function likelyCause(
  kind: AlertKind,
  facts: Facts,
  rules: readonly CauseRule[] = CAUSE_RULES,
): LikelyCause | undefined {
  for (const rule of rules) {
    if (!rule.kinds.includes(kind)) continue;
    const evidence = rule.when.map((c) => checkCondition(c, facts));
    if (evidence.every((e): e is string => e !== undefined)) {
      const action = (facts.engine && rule.actions?.[facts.engine]) ?? rule.action;
      return { rule: rule.id, cause: rule.cause, action, evidence };
    }
  }
  return undefined;
}

/**
 * A likely cause in `locale`: as found (English, as stored with the enrichment), or its rule's Chinese
 * cause and action with the evidence worded again from the same facts (the signals and trend the
 * enrichment kept, so the same rule holds on the same values). A rule this version no longer has keeps
 * the text it was stored with.
 * @param facts the enrichment the cause was found on
 */
export function causeIn(cause: LikelyCause, facts: Facts, locale: Locale = 'en'): LikelyCause {
  if (locale === 'en') return cause;
  const rule = CAUSE_RULES.find((r) => r.id === cause.rule);
  if (!rule) return cause;
  const evidence = rule.when.map((c) => checkCondition(c, facts, EVIDENCE_WORDS[locale]));
  // The stored action says which engine's flags it gave; without that engine's Chinese, its English.
  const actions = rule.actions ?? {};
  const engine = (Object.keys(actions) as Engine[]).find((e) => actions[e] === cause.action);
  return {
    rule: cause.rule,
    cause: rule.zh.cause,
    action: engine ? (rule.zh.actions?.[engine] ?? cause.action) : rule.zh.action,
    evidence: evidence.every((e): e is string => e !== undefined) ? evidence : cause.evidence,
  };
}
