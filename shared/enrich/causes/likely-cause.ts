/** Evaluates the likely-cause rules (`rules.ts`) on what enrichment gathered. Pure. */
import { lazy } from '../../core/lazy.js';
import { formatMemoryTrend, formatSignalValue } from '../values.js';
import { CAUSE_RULES, type Comparison, type Condition, type CauseRule } from './rules.js';
import type { AlertKind, LikelyCause, MemoryTrend, Signal } from '../types.js';

/** What the rules look at. */
export interface Facts {
  signals: readonly Signal[];
  trend?: MemoryTrend;
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
export function checkCondition(condition: Condition, facts: Facts): string | undefined {
  if ('trend' in condition) {
    return facts.trend?.growing ? `Memory trend ${formatMemoryTrend(facts.trend)}` : undefined;
  }
  if ('any' in condition) {
    for (const c of condition.any) {
      const evidence = checkCondition(c, facts);
      if (evidence !== undefined) return evidence;
    }
    return undefined;
  }
  const signal = find(facts, condition.signal);
  if (!signal) return undefined;
  const value = signal.value as number;
  const shown = `${signal.label} ${formatSignalValue(value, signal.unit)}`;
  if ('of' in condition) return relativeTo(condition, signal, shown, facts);
  if ('sinceFired' in condition) return sinceFired(condition, signal);
  if (!COMPARE[condition.op](value, condition.value)) return undefined;
  return `${shown} (${SYMBOL[condition.op]} ${formatSignalValue(condition.value, signal.unit)})`;
}

/** The signal named `name` when it has a finite value or ±Infinity now; `undefined` without data. */
function find(facts: Facts, name: string): Signal | undefined {
  const signal = facts.signals.find((s) => s.name === name);
  const value = signal?.value;
  return value === null || value === undefined || Number.isNaN(value) ? undefined : signal;
}

/** `value` × the other signal, compared: both must have a finite value, the other a positive one. */
function relativeTo(condition: Extract<Condition, { of: string }>, signal: Signal, shown: string, facts: Facts): string | undefined {
  const other = find(facts, condition.of);
  const base = other?.value;
  if (!other || base === null || base === undefined || !(base > 0) || !Number.isFinite(base) || !Number.isFinite(signal.value!)) return undefined;
  const times = signal.value! / base;
  if (!COMPARE[condition.op](times, condition.value)) return undefined;
  return `${shown} = ${TIMES.format(times)}× ${other.label} ${formatSignalValue(base, other.unit)} (${SYMBOL[condition.op]} ${TIMES.format(condition.value)}×)`;
}

/** The value now ÷ the value when the alert fired, compared; the value then must be known and positive. */
function sinceFired(condition: Extract<Condition, { sinceFired: true }>, signal: Signal): string | undefined {
  const then = signal.atStart;
  if (then === null || then === undefined || !(then > 0) || !Number.isFinite(then) || !Number.isFinite(signal.value!)) return undefined;
  const times = signal.value! / then;
  if (!COMPARE[condition.op](times, condition.value)) return undefined;
  const label = `${signal.label} ${formatSignalValue(then, signal.unit)} → ${formatSignalValue(signal.value, signal.unit)} since fired`;
  return `${label} (×${TIMES.format(times)}, ${SYMBOL[condition.op]} ×${TIMES.format(condition.value)})`;
}

/**
 * The first rule of `rules` for `kind` whose conditions all hold.
 * @returns the cause with its evidence (one line per condition), or `undefined` when no rule holds
 */
export function likelyCause(kind: AlertKind, facts: Facts, rules: readonly CauseRule[] = CAUSE_RULES): LikelyCause | undefined {
  for (const rule of rules) {
    if (!rule.kinds.includes(kind)) continue;
    const evidence = rule.when.map((c) => checkCondition(c, facts));
    if (evidence.every((e): e is string => e !== undefined)) {
      return { rule: rule.id, cause: rule.cause, action: rule.action, evidence };
    }
  }
  return undefined;
}
