/** Evaluates the likely-cause rules (`causes.ts`) on what enrichment gathered. Pure. */
import { formatMemoryTrend, formatSignalValue } from '../values.js';
import { CAUSE_RULES, type Comparison, type Condition, type CauseRule } from './rules.js';
import type { AlertKind, LikelyCause, MemoryTrend, Signal } from '../types.js';

/** What the rules look at. */
export interface Facts {
  signals: readonly Signal[];
  trend?: MemoryTrend;
}

const SYMBOL: Readonly<Record<Comparison, string>> = { '>=': '≥', '>': '>', '<=': '≤', '<': '<' };

const COMPARE: Readonly<Record<Comparison, (a: number, b: number) => boolean>> = {
  '>=': (a, b) => a >= b,
  '>': (a, b) => a > b,
  '<=': (a, b) => a <= b,
  '<': (a, b) => a < b,
};

/**
 * The evidence for one condition, or `undefined` when it does not hold. A signal absent from the
 * facts, with no data (`null`) or NaN never holds.
 * @example checkCondition({ signal: 'kv_cache_usage_ratio', op: '>=', value: 0.9 }, facts) // 'KV cache usage 97% (≥ 90%)'
 */
export function checkCondition(condition: Condition, facts: Facts): string | undefined {
  if ('trend' in condition) {
    return facts.trend?.growing ? `Memory trend ${formatMemoryTrend(facts.trend)}` : undefined;
  }
  const signal = facts.signals.find((s) => s.name === condition.signal);
  const value = signal?.value;
  if (!signal || value === null || value === undefined || Number.isNaN(value)) return undefined;
  if (!COMPARE[condition.op](value, condition.value)) return undefined;
  const threshold = formatSignalValue(condition.value, signal.unit);
  return `${signal.label} ${formatSignalValue(value, signal.unit)} (${SYMBOL[condition.op]} ${threshold})`;
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
