/**
 * Every signal an enricher reads, or a likely-cause rule looks at, has a Chinese label: a zh-CN card
 * otherwise shows that one line in English. Signal names are read from the enrichers' sources (a
 * signal definition's `name`, or the first argument of a definition helper followed by its English
 * label), so a new signal without an entry fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SIGNAL_LABELS_ZH, signalLabel } from '../../../shared/enrich/signals/labels.js';

const ENRICH = fileURLToPath(new URL('../../../shared/enrich/', import.meta.url));
const NAME = "'([a-z][a-z0-9]*(?:_[a-z0-9]+)+)'";
const PATTERNS = [
  // name: 'x'   and   name: cond ? 'x' : 'y'
  new RegExp(String.raw`\bname:\s*${NAME}`, 'g'),
  new RegExp(String.raw`\bname:\s*[\w.]+\s*\?\s*${NAME}\s*:\s*${NAME}`, 'g'),
  // gauge('requests_waiting', 'Requests waiting', …): a helper given the name, then the English label.
  new RegExp(String.raw`\b\w+\(\s*${NAME},\s*'[A-Z]`, 'g'),
  // A cause rule's condition: { signal: 'x', … }.
  new RegExp(String.raw`\bsignal:\s*${NAME}`, 'g'),
];

function sources(dir: string): string[] {
  return readdirSync(join(ENRICH, dir))
    .filter((f) => f.endsWith('.ts') && f !== 'labels.ts')
    .map((f) => readFileSync(join(ENRICH, dir, f), 'utf8'));
}

function signalNames(): Set<string> {
  const names = new Set<string>();
  for (const text of [...sources('signals'), ...sources('kinds'), ...sources('causes'), ...sources('.')])
    for (const pattern of PATTERNS)
      for (const m of text.matchAll(pattern)) for (const name of m.slice(1)) if (name) names.add(name);
  return names;
}

describe('Chinese signal labels', () => {
  const names = signalNames();

  it('the scan finds signals of every shape (a check of the scan itself)', () => {
    for (const known of [
      'kv_cache_usage_ratio', // name: '…'
      'memory_used_mib', // name: dcgm ? … : '…'
      'ttft_p95_seconds', // latencyQuantile('…', 'TTFT p95', …)
      'down_for_seconds', // targetSignal(\n '…',\n 'Down for …'
      'length_capped_ratio', // share(…) and a rule's signal
    ])
      expect(names).toContain(known);
  });

  it('every signal has a zh-CN label, and every label a signal', () => {
    expect([...names].filter((n) => SIGNAL_LABELS_ZH[n] === undefined)).toEqual([]);
    expect(Object.keys(SIGNAL_LABELS_ZH).filter((n) => !names.has(n))).toEqual([]);
  });

  it('says a split reading and a host average in Chinese, and keeps English for en', () => {
    expect(signalLabel({ name: 'ttft_p95_seconds:v1', label: 'TTFT p95 (V1 engine)' }, 'zh-CN')).toBe(
      'TTFT p95（V1 引擎）',
    );
    expect(signalLabel({ name: 'kv_cache_usage_ratio', label: 'KV cache usage' })).toBe('KV cache usage');
    expect(signalLabel({ name: 'not_a_signal', label: 'Something' }, 'zh-CN')).toBe('Something');
  });
});
