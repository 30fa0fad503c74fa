/**
 * One new alert's enrichment spends ONE Prometheus round: its requests (the queries at now, and at
 * the time it fired: two evaluation times, so two requests) are all on the wire before any is
 * answered. The loopback Prometheus holds every answer until all expected requests are open (or a
 * bounded wait ends), and counts how many were open at once; nothing here times anything.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { silentLogger } from '../../shared/core/logger.js';
import { enrichAlerts } from '../../shared/enrich/index.js';
import { stormWebhook } from './storm-webhook.js';

const EMPTY = (path: string) =>
  `{"status":"success","data":{"resultType":"${path.includes('query_range') ? 'matrix' : 'vector'}","result":[]}}`;
/** How long the server holds answers waiting for more requests, ms: a sequential client ends up with one open at a time. */
const HOLD_MS = 1000;

let url = '';
let open = 0;
let mostOpen = 0;
let requests = 0;
let expected = 2;
const held: { res: ServerResponse; path: string }[] = [];
const release = () => {
  for (const { res, path } of held.splice(0))
    res.writeHead(200, { 'content-type': 'application/json' }).end(EMPTY(path));
  open = 0;
};
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    requests++;
    mostOpen = Math.max(mostOpen, ++open);
    held.push({ res, path: req.url ?? '' });
    if (held.length >= expected) release();
    else setTimeout(() => held.length && release(), HOLD_MS);
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('one new alert’s enrichment', () => {
  it('sends its requests side by side: all open at once, one round', async () => {
    const alerts = stormWebhook(6).alerts as Alert[];
    for (const alert of alerts) {
      requests = 0;
      mostOpen = 0;
      // gpu_memory reads a range (the trend) besides its two instants: three requests.
      expected = alert.labels.alertname?.includes('Memory') ? 3 : 2;
      const results = await enrichAlerts([alert], {
        prometheusUrl: url,
        timeoutMs: 5000,
        memoryTrendWindowHours: 6,
        logger: silentLogger,
      });
      expect(results.get(alert.fingerprint)?.status, alert.labels.alertname).toBe('enriched');
      expect({ alert: alert.labels.alertname, mostOpen }).toEqual({
        alert: alert.labels.alertname,
        mostOpen: requests,
      });
    }
  });
});
