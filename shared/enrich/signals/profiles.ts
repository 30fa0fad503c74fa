/**
 * A kind's signals for the alert's engine (`../engines.ts`): vLLM's definitions as they are; Ray
 * Serve LLM's and NIM's the same definitions over their names for vLLM's metrics (`ray_vllm_…`,
 * `ray_vllm:…`, or bare); SGLang's its own (`sglang.ts`) where it has one. A signal the engine
 * does not expose is not asked: it reads `null` with no query, and the message says the engine does
 * not expose it (never 0), so the rules that need it stay silent.
 */
import type { Alert } from '../../alertmanager/schema.js';
import type { EnrichContext, SignalDef } from '../enricher.js';
import { ENGINE_NAMES, engineOf, type Engine } from '../engines.js';
import type { Signal } from '../types.js';
import { memo } from './plan.js';
import { readSignals } from './read.js';
import { SGLANG_SIGNALS } from './sglang.js';

/** The prefix each engine puts where vLLM writes `vllm:`. */
const PREFIXES: Readonly<Record<'ray' | 'ray_colon' | 'nim', string>> = {
  ray: 'ray_vllm_',
  ray_colon: 'ray_vllm:',
  nim: '',
};

/**
 * `expr` with each `vllm:` metric prefix replaced by `prefix`; string literals (label values) are
 * left alone. One pass over the text.
 */
export function renamePrefix(expr: string, prefix: string): string {
  let out = '';
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < expr.length && expr[j] !== c) j += expr[j] === '\\' && c !== '`' ? 2 : 1;
      out += expr.slice(i, j + 1);
      i = j + 1;
    } else if (expr.startsWith('vllm:', i) && (i === 0 || !/[A-Za-z0-9_:]/.test(expr[i - 1]!))) {
      out += prefix;
      i += 5;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** A kind's definitions for one engine, and vLLM's that it does not expose. */
interface Profile {
  defs: readonly SignalDef[];
  missing: readonly SignalDef[];
}

const RENAMED = new WeakMap<SignalDef, Map<string, SignalDef>>();
const PROFILES = new WeakMap<readonly SignalDef[], Map<Engine, Profile>>();

/** `def` over another prefix, built once per definition and prefix (plans and templates are keyed by it). */
function renamed(def: SignalDef, prefix: string): SignalDef {
  const byPrefix = memo(RENAMED, def, () => new Map<string, SignalDef>());
  let other = byPrefix.get(prefix);
  if (!other) {
    other = {
      ...def,
      expr: (scope) => renamePrefix(def.expr(scope), prefix),
      ...(def.histogram ? { histogram: def.histogram.map((h) => renamePrefix(h, prefix)) } : {}),
    };
    byPrefix.set(prefix, other);
  }
  return other;
}

/**
 * `list` for `engine` (built once per list and engine, so its reads are planned once per group).
 * @param extras signals an engine has beyond vLLM's (SGLang's aborted share), appended
 */
export function profileFor(list: readonly SignalDef[], engine: Engine, extras: readonly SignalDef[] = []): Profile {
  const byEngine = memo(PROFILES, list, () => new Map<Engine, Profile>());
  let profile = byEngine.get(engine);
  if (!profile) {
    if (engine === 'vllm') profile = { defs: list, missing: [] };
    else if (engine === 'sglang') {
      const defs = list.flatMap((d) => (SGLANG_SIGNALS.has(d.name) ? [SGLANG_SIGNALS.get(d.name)!] : []));
      profile = { defs: [...defs, ...extras], missing: list.filter((d) => !SGLANG_SIGNALS.has(d.name)) };
    } else profile = { defs: list.map((d) => renamed(d, PREFIXES[engine])), missing: [] };
    byEngine.set(engine, profile);
  }
  return profile;
}

/**
 * Reads `list` (vLLM's definitions of a kind) for the alert's engine (`readSignals`).
 * @returns its signals, then each it does not expose with no data and no query
 * @throws what `readSignals` throws
 */
export async function readEngineSignals(
  ctx: EnrichContext,
  alert: Alert,
  list: readonly SignalDef[],
  extras: Partial<Record<Engine, readonly SignalDef[]>> = {},
): Promise<Signal[]> {
  const engine = engineOf(alert);
  if (engine === 'vllm') return readSignals(ctx, alert, list);
  const { defs, missing } = profileFor(list, engine, extras[engine]);
  const signals = await readSignals(ctx, alert, defs);
  return [
    ...signals,
    ...missing.map(
      (d): Signal => ({
        name: d.name,
        label: d.label,
        unit: d.unit,
        value: null,
        query: '',
        notExposedBy: ENGINE_NAMES[engine],
      }),
    ),
  ];
}
