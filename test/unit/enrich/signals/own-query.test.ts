/**
 * An alert's own query (what its signals keep, its record rebuilds and its links show) is built from
 * a per-definition template for speed (a storm builds thousands); it must equal, character for character,
 * the definition's text for a scope of that one alert, for every definition and label value.
 */
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../../shared/alertmanager/schema.js';
import type { QueryScope, SignalDef } from '../../../../shared/enrich/enricher.js';
import { GPU_MEMORY_TOTAL } from '../../../../shared/enrich/kinds/gpu-memory.js';
import { ERROR_RATE_SIGNALS } from '../../../../shared/enrich/kinds/error-rate.js';
import { KV_CACHE_SIGNALS } from '../../../../shared/enrich/kinds/kv-cache.js';
import { LATENCY_SIGNALS } from '../../../../shared/enrich/kinds/latency.js';
import { QUEUE_SIGNALS } from '../../../../shared/enrich/kinds/queue.js';
import { TARGET_DOWN_SIGNALS } from '../../../../shared/enrich/kinds/target-down.js';
import { ownQuery } from '../../../../shared/enrich/signals/read.js';
import { groupMatchers, selector } from '../../../../shared/prometheus/promql.js';

const DEFS = [
  ...LATENCY_SIGNALS,
  ...KV_CACHE_SIGNALS,
  ...QUEUE_SIGNALS,
  ...ERROR_RATE_SIGNALS,
  ...TARGET_DOWN_SIGNALS,
  GPU_MEMORY_TOTAL,
];

/** The definition's own text for a scope of the one alert (what ownQuery was before its template). */
function reference(def: SignalDef, alert: Pick<Alert, 'labels'>): string {
  const by = def.scopeLabels.filter((name) => alert.labels[name] !== undefined);
  const scope: QueryScope = { matchers: groupMatchers([alert.labels], by), by };
  return def.expr(def.breakdown ? { ...scope, by: [...scope.by, def.breakdown] } : scope);
}

const LABEL_SETS: Record<string, string>[] = [
  { model_name: 'qwen3-8b', instance: '10.0.0.1:8000', job: 'vllm' },
  {
    model_name: 'a"b\\c\nd|e.*',
    instance: '[::1]:8000',
    pod: 'p-0',
    namespace: 'ns',
    engine: '0',
    handler: '/v1/chat',
  },
  {
    model_name: 'tab\there \ufffd \ud800 lone',
    gpu: '3',
    Hostname: 'gpu-1',
    UUID: 'GPU-x',
    GPU_I_ID: '2',
    container: 'c',
  },
  { model_name: '\u0000nul', job: '' },
  { alertname: 'NoScopeLabels' },
];

describe('ownQuery', () => {
  it('equals the definition built for the one alert, for every definition and awkward label value', () => {
    for (const def of DEFS)
      for (const labels of LABEL_SETS)
        expect(ownQuery(def, { labels }), `${def.name} ${JSON.stringify(labels)}`).toBe(reference(def, { labels }));
  });

  it('builds a definition whose own text holds a NUL (a configured name) whole', () => {
    const def: SignalDef = {
      name: 'odd',
      label: 'Odd',
      unit: 'count',
      scopeLabels: ['job'],
      expr: (s) => `sum by (job) (${selector('odd\u0000metric', s.matchers)})`,
    };
    const labels = { job: 'vllm' };
    expect(ownQuery(def, { labels })).toBe(reference(def, { labels }));
    expect(ownQuery(def, { labels })).toBe('sum by (job) ({"odd\u0000metric",job="vllm"})');
  });
});
