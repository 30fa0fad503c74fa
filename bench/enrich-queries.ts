/**
 * Prometheus requests a group costs, by kind, for groups of 1, 10 and 100 alerts: the enrichment
 * stage against a loopback Prometheus stand-in that answers every query with an empty result and
 * counts requests (the queries asked at one time go in one request: shared/prometheus/batch.ts).
 * Cost should grow with kinds, not alerts: the ratio to one alert stays 1 (until a batch's size cap).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Alert } from '../shared/alertmanager/schema.js';
import { enrichAlerts } from '../shared/enrich/index.js';
import type { AlertKind } from '../shared/enrich/types.js';
import { silentLogger } from '../shared/core/logger.js';
import { medianMs, round, type Benchmark, type Row } from './harness.js';

const SIZES = [1, 10, 100] as const;
const KINDS: ReadonlyArray<[AlertKind, string]> = [
  ['latency', 'ttft'],
  ['kv_cache', 'cache'],
  ['queue', 'queue'],
  ['error_rate', 'error'],
  ['gpu_memory', 'memory'],
];
const EMPTY = {
  vector: '{"status":"success","data":{"resultType":"vector","result":[]}}',
  matrix: '{"status":"success","data":{"resultType":"matrix","result":[]}}',
};

/** `n` firing alerts of one kind, one per model (or GPU), started 15 to 60 minutes ago. */
function group(kindLabel: string, n: number): Alert[] {
  return Array.from({ length: n }, (_, i) => ({
    status: 'firing',
    labels: {
      alertname: 'Bench',
      kind: kindLabel,
      model_name: `model-${i}`,
      gpu: String(i),
      Hostname: 'node-1',
      instance: '10.0.0.1:8000',
      job: 'vllm',
    },
    annotations: {},
    startsAt: new Date(Date.now() - ((i % 4) + 1) * 900_000).toISOString(),
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: '',
    fingerprint: `bench${kindLabel}${i}`,
  }));
}

export const enrichQueries: Benchmark = {
  name: 'queries',
  description:
    'Prometheus requests per group and kind for 1, 10 and 100 alerts, and the median time per group on loopback',
  run: async () => {
    let requests = 0;
    const server = createServer((req, res) => {
      requests++;
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url?.includes('query_range') ? EMPTY.matrix : EMPTY.vector);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const deps = { prometheusUrl: url, timeoutMs: 10_000, memoryTrendWindowHours: 6, logger: silentLogger };
    const rows: Row[] = [];
    try {
      for (const [kind, label] of KINDS) {
        let one = 0;
        for (const n of SIZES) {
          const alerts = group(label, n);
          requests = 0;
          await enrichAlerts(alerts, deps);
          const queries = requests;
          one ||= queries;
          const ms = await medianMs(() => enrichAlerts(alerts, deps), 7, 1);
          rows.push({
            kind,
            alerts: n,
            requests: queries,
            'ratio to 1 alert': round(queries / one),
            'requests per alert': round(queries / n),
            'median ms': round(ms),
          });
        }
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    return rows;
  },
};
