/**
 * An alert whose `startsAt` is Go's zero time (`0001-01-01T00:00:00Z`, "start unknown",
 * `hasKnownStart`; AMP's default text sends it and the webhook accepts it) has no "when fired" value
 * and does not count as a start for its peers: counted (year 1), its peers of the same shape, all fired
 * at 12:42, got one range query from year 1 instead of an instant query at 12:42, and every peer's
 * `atStart` was null.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GO_ZERO_TIME, type Alert } from '../../shared/alertmanager/schema.js';
import { silentLogger } from '../../shared/core/logger.js';
import { enrichAlerts } from '../../shared/enrich/index.js';
import { stormWebhook } from './storm-webhook.js';

const NOW = Date.parse('2026-11-29T13:00:00Z');
let url = '';
let alerts: Alert[] = [];
// Every series of the group's alerts; its value is the evaluation time's minute, so `atStart` shows which time was read.
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const u = new URL(req.url ?? '/', 'http://x');
    const p = new URLSearchParams(req.method === 'POST' ? body : u.search);
    const range = u.pathname.includes('query_range');
    const minute = (s: number) => String(new Date(s * 1000).getUTCMinutes());
    const metrics = alerts.map((a) => ({
      metric: Object.fromEntries(
        Object.entries(a.labels).filter(([k]) => !['alertname', 'severity', 'kind'].includes(k)),
      ),
    }));
    const at = Number(p.get('time') ?? NOW / 1000);
    const result = range
      ? metrics.map(({ metric }) => ({ metric, values: [[NOW / 1000, minute(NOW / 1000)]] }))
      : metrics.map(({ metric }) => ({ metric, value: [at, minute(at)] }));
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ status: 'success', data: { resultType: range ? 'matrix' : 'vector', result } }));
  });
});
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('"when fired" with a peer whose start is unknown (Go zero time)', () => {
  it('still reads the other peers at their own start (12:42)', async () => {
    const all = stormWebhook(40).alerts as Alert[];
    alerts = all
      .filter((a) => a.labels.alertname === all[0]!.labels.alertname)
      .slice(0, 3)
      .map((a, i) => ({ ...a, startsAt: i === 0 ? GO_ZERO_TIME : '2026-11-29T12:42:00Z' }));
    const results = await enrichAlerts(alerts, {
      prometheusUrl: url,
      timeoutMs: 5000,
      memoryTrendWindowHours: 6,
      logger: silentLogger,
      now: () => new Date(NOW),
    });
    const peer = results.get(alerts[1]!.fingerprint);
    expect(peer?.status).toBe('enriched');
    const signals = (peer as { signals: { name: string; atStart?: number | null }[] }).signals;
    expect(signals.map((s) => [s.name, s.atStart])).toEqual(signals.map((s) => [s.name, 42]));
  });
});
