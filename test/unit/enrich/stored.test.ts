/**
 * The enrichment as alert records store it: queries the alert's labels rebuild are left out, and
 * read back exactly as the enrichers made them (every kind, breakdowns and splits, a group's alert).
 */
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../../shared/alertmanager/schema.js';
import type { EnrichContext } from '../../../shared/enrich/enricher.js';
import { ENRICHERS } from '../../../shared/enrich/kinds/index.js';
import { restoredEnrichment, storedEnrichment, type StoredEnrichment } from '../../../shared/enrich/stored.js';
import type { AlertKind, Enrichment } from '../../../shared/enrich/types.js';
import { fromJson, toJson } from '../../../shared/store/alert-record-items.js';
import { ruleAlert } from '../../fixtures/prometheus/alerts.js';
import { fakeContext, NOW } from './fake-context.js';

const labels = (i: number, kind: AlertKind) => ({
  alertname: `A${kind}`,
  kind,
  severity: 'critical',
  model_name: `org/"m"-${i}`,
  instance: `10.0.0.${i}:8000`,
  job: 'vllm',
  Hostname: `gpu-node-${i}`,
  gpu: '0',
});

/**
 * A context whose every answer holds two series of each alert (two `finished_reason`s and both engine
 * generations), so breakdown and split signals expand into `name:value` signals.
 */
function answering(peers: Alert[]): EnrichContext {
  const { ctx } = fakeContext(peers);
  const samples = peers.flatMap((p, i) => [
    {
      metric: { ...p.labels, finished_reason: 'stop', engine_generation: 'v0', le: '10' },
      time: NOW.getTime() / 1000,
      value: i + 0.5,
    },
    {
      metric: { ...p.labels, finished_reason: 'length', engine_generation: 'v1', le: '20' },
      time: NOW.getTime() / 1000,
      value: i + 1.5,
    },
  ]);
  return { ...ctx, instant: async () => samples, range: async () => [] };
}

async function enriched(kind: AlertKind, alert: Alert, ctx: EnrichContext): Promise<Enrichment> {
  const { signals, trend } = await ENRICHERS[kind].enrich(alert as never, ctx);
  return { status: 'enriched', kind, signals, ...(trend && { trend }) };
}

/** Stored and read back as a record does (JSON that keeps NaN). */
const roundTrip = (e: Enrichment, alert: Alert) =>
  restoredEnrichment(fromJson(toJson(storedEnrichment(e, alert))) as StoredEnrichment, alert);

const KINDS: AlertKind[] = ['latency', 'kv_cache', 'queue', 'error_rate', 'gpu_memory', 'target_down', 'unknown'];

describe('stored enrichment', () => {
  it.each(KINDS)(
    '%s: stores no query the labels rebuild and reads every signal back as enriched, alone or in a group',
    async (kind) => {
      const group = [1, 2, 3].map((i) =>
        ruleAlert(labels(i, kind), kind === 'target_down' ? 'up == 0' : 'x{a="b"} > 1', `f${i}`),
      );
      for (const peers of [[group[0]!], group]) {
        const alert = peers.at(-1)!;
        const e = await enriched(kind, alert, answering(peers));
        const signals = e.status === 'enriched' ? e.signals : [];
        expect(signals.length).toBeGreaterThan(0);
        const stored = storedEnrichment(e, alert);
        const kept =
          stored.status === 'enriched' ? stored.signals.filter((s) => s.query !== undefined).map((s) => s.name) : [];
        // The memory series' own signal depends on settings, the rule's own query on its expression (not in the basis): stored.
        expect(kept).toEqual(
          kind === 'gpu_memory' ? ['gpu_memory_used_mib'] : kind === 'unknown' ? ['expression_value'] : [],
        );
        expect(roundTrip(e, alert)).toEqual(e);
      }
    },
  );

  it('expands breakdown and split signals, and rebuilds each with its definition', async () => {
    const alert = ruleAlert(labels(1, 'error_rate'), 'x > 1', 'f');
    const e = await enriched('error_rate', alert, answering([alert]));
    const names = e.status === 'enriched' ? e.signals.map((s) => s.name) : [];
    expect(names).toEqual(expect.arrayContaining(['finished_per_second:length', 'finished_per_second:stop']));
    const latency = await enriched('latency', alert, answering([alert]));
    expect(latency.status === 'enriched' && latency.signals.map((s) => s.name)).toEqual(
      expect.arrayContaining(['ttft_p95_seconds:v0', 'ttft_p95_seconds:v1']),
    );
    expect(roundTrip(e, alert)).toEqual(e);
    expect(roundTrip(latency, alert)).toEqual(latency);
  });

  it('keeps a query the labels do not rebuild (another version, a setting), and reads it as stored', () => {
    const alert = ruleAlert(labels(1, 'queue'), 'x > 1', 'f');
    const e: Enrichment = {
      status: 'enriched',
      kind: 'queue',
      signals: [
        {
          name: 'requests_waiting',
          label: 'Requests waiting',
          value: 3,
          unit: 'count',
          query: 'sum(vllm:num_requests_waiting{job="old"})',
        },
        { name: 'no_longer_defined', label: 'Gone', value: Number.NaN, unit: 'none', query: 'gone_metric' },
      ],
    };
    const stored = storedEnrichment(e, alert);
    expect(stored.status === 'enriched' && stored.signals.map((s) => s.query)).toEqual([
      'sum(vllm:num_requests_waiting{job="old"})',
      'gone_metric',
    ]);
    expect(roundTrip(e, alert)).toEqual(e);
  });

  it.each(KINDS)(
    '%s: reads back the queries that were sent when a later write replaced the record’s alert (its resolve cut a label, its rule was edited)',
    async (kind) => {
      const alert = ruleAlert(labels(1, kind), 'sum(rate(foo_total[5m])) > 1', 'f');
      const e = await enriched(kind, alert, answering([alert]));
      const stored = fromJson(toJson(storedEnrichment(e, alert))) as StoredEnrichment;
      // The record's resolve write replaces its alert and keeps the firing's enrichment (shared/store/alert-record-dynamodb.ts).
      const later = ruleAlert(
        { ...labels(1, kind), model_name: '(cut)', instance: '10.9.9.9:8000' },
        'sum(rate(foo_total[10m])) > 2',
        'f',
      );
      expect(restoredEnrichment(stored, later)).toEqual(e);
    },
  );

  it('leaves an unavailable enrichment as it is', () => {
    const e: Enrichment = { status: 'unavailable', kind: 'latency', reason: 'Prometheus timed out', cause: 'timeout' };
    expect(storedEnrichment(e, ruleAlert({}, 'x', 'f'))).toBe(e);
  });
});
