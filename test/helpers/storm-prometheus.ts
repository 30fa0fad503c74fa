/**
 * A loopback Prometheus stand-in whose answers are a pure function of the request: every query
 * (each member of a batched query, told apart by its `__batch_query__` tag) gets samples for a fixed
 * subset of a storm's replicas, with values hashed from the member's own text and the replica, so
 * every alert's enrichment (values, split and breakdown signals, bucket bounds, likely causes) is
 * the same on every run of the same code, and changes when a query's text or routing changes.
 * Used to pin a storm's per-alert enrichment byte for byte across optimisations
 * (test/integration/enrich-storm-golden.test.ts, bench/enrich-storm.ts).
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { close, listen, readBody, requestParams } from '../fixtures/prometheus/exchanges.js';

const TAG = '__batch_query__';

/** The member expressions of a (possibly batched) query, with their tag; one untagged member when not batched. */
export function membersOf(query: string): { expr: string; tag?: string }[] {
  if (!query.includes(`"${TAG}"`)) return [{ expr: query }];
  const members: { expr: string; tag?: string }[] = [];
  let start = 0;
  for (let i = 0; ; i++) {
    const suffix = `, "${TAG}", "${i}", "", "")`;
    const end = query.indexOf(suffix, start);
    if (end < 0) break;
    members.push({ expr: query.slice(start + 'label_replace('.length, end), tag: String(i) });
    start = end + suffix.length + ' or '.length;
  }
  return members;
}

/** A number in [0, 1) from a text. */
function unit(text: string): number {
  return createHash('sha1').update(text).digest().readUInt32BE(0) / 2 ** 32;
}

/** The instances and hosts a query's matchers name (`instance=…`, `Hostname=…`, alternations split). */
function named(expr: string): Set<string> {
  const names = new Set<string>();
  for (const m of expr.matchAll(/(?:instance|Hostname)=~?"((?:[^"\\]|\\.)*)"/g)) {
    for (const v of m[1]!.replace(/\\\\/g, '\\').replace(/\\(.)/g, '$1').split('|')) names.add(v);
  }
  return names;
}

/** The labels a sample of `expr` carries for a replica (identity, host, and what the expression groups by). */
function sampleLabels(expr: string, alert: Alert): Record<string, string>[] {
  const { model_name, instance, job } = alert.labels;
  const host = (instance ?? '').replace(/:\d+$/, '');
  const base: Record<string, string> = {
    model_name: model_name ?? '',
    instance: instance ?? '',
    job: job ?? '',
    Hostname: host,
    gpu: '0',
    UUID: `GPU-${host}`,
  };
  let sets = [base];
  if (expr.includes('engine_generation'))
    sets = sets.flatMap((s) =>
      unit(`${expr}|gen|${instance}`) < 0.2
        ? [
            { ...s, engine_generation: 'v0' },
            { ...s, engine_generation: 'v1' },
          ]
        : [{ ...s, engine_generation: 'v1' }],
    );
  if (expr.includes('finished_reason)'))
    sets = sets.flatMap((s) => ['length', 'stop'].map((r) => ({ ...s, finished_reason: r })));
  if (expr.startsWith('count by (le'))
    sets = sets.flatMap((s) => ['0.5', '1', '2.5', '+Inf'].map((le) => ({ ...s, le })));
  return sets;
}

/**
 * @param alerts the storm's alerts; two replicas in three have series (the others read "no data")
 * @param options `empty`: every answer empty, as the floor bench's stand-in (bench/floor-fakes.ts)
 */
export async function startStormPrometheus(
  alerts: readonly Alert[],
  options: { empty?: boolean } = {},
): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  const replicas = options.empty ? [] : alerts.filter((_, i) => i % 3 !== 1);
  let requests = 0;
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      requests++;
      const { path, params } = requestParams(req, body);
      const range = path.endsWith('query_range');
      const result = membersOf(params.query ?? '').flatMap(({ expr, tag }) => {
        if (replicas.length === 0) return [];
        const names = named(expr);
        const mine = replicas.filter(
          (a) => names.has(a.labels.instance ?? '') || names.has((a.labels.instance ?? '').replace(/:\d+$/, '')),
        );
        return mine.flatMap((alert) =>
          sampleLabels(expr, alert).map((labels) => {
            const metric = tag === undefined ? labels : { ...labels, [TAG]: tag };
            const v = unit(`${expr}|${JSON.stringify(labels)}`);
            const value = String(v < 0.05 ? 'NaN' : Math.round(v * 1e6) / 1e5);
            if (!range) return { metric, value: [Number(params.time), value] };
            const end = Number(params.end);
            const step = Number(params.step);
            const values = Array.from({ length: 6 }, (_, k) => [
              end - (5 - k) * step,
              String(Math.round((v + k * 0.01) * 1e6) / 1e3),
            ]);
            return { metric, values };
          }),
        );
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: 'success', data: { resultType: range ? 'matrix' : 'vector', result } }));
    });
  });
  return { url: await listen(server), requests: () => requests, close: () => close(server) };
}
