/**
 * An alert resolved by Alertmanager (its `endsAt` passed without a resend) and then sent firing again
 * with the same `fingerprint` and `startsAt`: announced as firing again, unless the source
 * of truth says it is resolved (then a stale copy: not sent, and the history says why). The real app,
 * pipeline, ack runtime and ledger on dynalite; Prometheus and Alertmanager as loopback stand-ins
 * that answer their API's exact wire format (the real binaries: test/e2e/refire.e2e.test.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAckRuntime } from '../../shared/runtime/ack.js';
import { createAlertStateSource } from '../../shared/runtime/alert-state.js';
import { createApp } from '../../shared/http/app.js';
import { headline, headlineText } from '../../shared/render/content.js';
import { renderSlack } from '../../shared/channels/slack/index.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { createLogger } from '../../shared/core/logger.js';
import { prometheusMetrics } from '../../shared/metrics/prometheus.js';
import { startLoopback, type Loopback, type RecordedRequest } from '../helpers/loopback.js';
import { fixture } from '../helpers/fixtures.js';
import { RecordingChannel } from './ack-harness.js';

const TOKEN = 'test-token-0123456789abcdef';
const T = '2026-11-29T12:42:23.143Z';
const FP = '936e109b8c52c001';
let db: LocalDynamoDb;
let tables = 0;
const servers: Loopback[] = [];

beforeAll(async () => {
  db = await startLocalDynamoDb('refire-test-0');
});
afterAll(async () => db.close());
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** The issue's three posts (and a fourth): fingerprint a1, startsAt T, firing / resolved at T+6m / firing / resolved later. */
function post(status: 'firing' | 'resolved', endsAt = '0001-01-01T00:00:00Z') {
  const body = fixture('firing-kv-cache-critical');
  body.status = status;
  body.alerts[0]!.status = status;
  body.alerts[0]!.endsAt = endsAt;
  return JSON.stringify(body);
}
const FIRING = post('firing');
const RESOLVED = post('resolved', '2026-11-29T12:48:23.143Z');
const RESOLVED_AGAIN = post('resolved', '2026-11-29T13:10:00.000Z');

async function harness(env: Record<string, string> = {}) {
  const tableName = `refire-${++tables}`;
  await ensureTable(db.client, tableName);
  const config = loadConfig({ WEBHOOK_TOKEN: TOKEN, TABLE_NAME: tableName, ...env });
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger('info', (line) => logs.push(JSON.parse(line) as Record<string, unknown>));
  const channels = [new RecordingChannel('slack'), new RecordingChannel('sns')];
  const runtime = createAckRuntime(config, { dynamodb: db.client }, channels, { logger });
  const prom = prometheusMetrics();
  const app = createApp(config, {
    ...testDeps({
      metrics: prom.metrics,
      table: { client: db.client, tableName },
      alerts: runtime.tracker.stores,
      // The ack runtime's clock (the real one): records and their reads agree on what has expired.
      now: Date.now,
      channels,
      enrich: async (alerts) =>
        new Map<string, Enrichment>(
          alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }]),
        ),
      delivery: { timeoutMs: 2000, retries: 0, budgetMs: 5000 },
      logger,
      ack: runtime.tracker,
      alertState: createAlertStateSource(config),
    }),
  });
  const send = async (body: string) => {
    const res = await app.request('/v1/alertmanager', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const statuses = () => channels.map((c) => c.received.map((n) => n.status));
  const history = async () =>
    (await (await app.request(`/v1/alerts/${FP}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as {
      history: Record<string, unknown>[];
      record: Record<string, unknown>;
    };
  /** `dedupe_decisions_total` by decision, from the exposition (series at 0 included). */
  const decisions = async () =>
    Object.fromEntries(
      [
        ...(await prom.scrape()).body.matchAll(
          /^llm_alert_pipeline_dedupe_decisions_total\{decision="([^"]+)"\} (\d+)$/gm,
        ),
      ].map((m) => [m[1], Number(m[2])]),
    );
  return { send, channels, statuses, history, logs, decisions };
}

/** A Prometheus stand-in whose `ALERTS` series say the alert fires now (`now`) and/or fired since it started (`seen`). */
async function prometheus(state: { now: boolean; seen: boolean }): Promise<Loopback> {
  const series = {
    __name__: 'ALERTS',
    alertname: 'VLLMKVCacheNearlyFull',
    alertstate: 'firing',
    instance: '127.0.0.1:9800',
    job: 'vllm',
    kind: 'cache',
    model_name: 'qwen3-8b',
    severity: 'critical',
  };
  const server = await startLoopback((r: RecordedRequest) => {
    const query = new URL(r.path, 'http://x').searchParams.get('query') ?? '';
    const present = query.startsWith('max_over_time(') ? state.seen : state.now;
    const result = present
      ? [
          {
            metric: query.startsWith('max_over_time(') ? { ...series, __name__: undefined } : series,
            value: [Date.now() / 1000, '1'],
          },
        ]
      : [];
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }),
    };
  });
  servers.push(server);
  return server;
}

/** An Alertmanager stand-in listing the alert (active) or not. */
async function alertmanager(listed: boolean): Promise<Loopback> {
  const alert = {
    fingerprint: FP,
    startsAt: T,
    endsAt: new Date(Date.now() + 300_000).toISOString(),
    updatedAt: T,
    labels: { alertname: 'VLLMKVCacheNearlyFull' },
    annotations: {},
    receivers: [{ name: 'pipe' }],
    status: { state: 'active', silencedBy: [], inhibitedBy: [] },
  };
  const server = await startLoopback({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(listed ? [alert] : []),
  });
  servers.push(server);
  return server;
}

describe('an alert resolved by a missed resend, then firing again with the same startsAt', () => {
  it('is announced firing again without a source of truth, and its own resolve after it', async () => {
    const h = await harness();
    expect((await h.send(FIRING)).body).toMatchObject({ notified: 1 });
    expect((await h.send(RESOLVED)).body).toMatchObject({ notified: 1 });
    const third = await h.send(FIRING);
    expect(third).toMatchObject({ status: 200, body: { notified: 1, duplicates: 0 } });
    expect(h.statuses()).toEqual([
      ['firing', 'resolved', 'firing'],
      ['firing', 'resolved', 'firing'],
    ]);
    const again = h.channels[0]!.received[2]!;
    expect(headlineText(headline(again))).toBe('🔥 FIRING AGAIN · critical · VLLMKVCacheNearlyFull (1)');
    expect(JSON.stringify(renderSlack(again))).toContain('Firing again: it was reported resolved, and it still fires');
    expect(h.logs.find((l) => l.event === 'alert deduped' && l.decision === 'firing again')).toMatchObject({
      fingerprint: FP,
      generation: 1,
      source: 'none',
      verdict: 'unknown',
    });
    // A repeat_interval resend of the re-fire is a duplicate; its own resolve is new (not "already notified").
    expect((await h.send(FIRING)).body).toMatchObject({ notified: 0, duplicates: 1 });
    expect((await h.send(RESOLVED_AGAIN)).body).toMatchObject({ notified: 1 });
    expect(h.statuses()[0]).toEqual(['firing', 'resolved', 'firing', 'resolved']);
    const { record, history } = await h.history();
    expect(record).toMatchObject({ status: 'resolved' });
    expect(history.filter((e) => e.type === 'notified').map((e) => [e.status, e.generation ?? 0])).toEqual([
      ['firing', 0],
      ['resolved', 0],
      ['firing', 1],
      ['resolved', 1],
    ]);
    // Counted as what each post turned out to be: the candidate re-fire is "firing again", once.
    expect(await h.decisions()).toEqual({
      'first notification': 3,
      'firing again': 1,
      'silence ended': 0,
      repair: 0,
      'already notified': 1,
      'in flight': 0,
      'stale copy': 0,
    });
  });

  it('is announced when Prometheus has the ALERTS series firing now', async () => {
    const prom = await prometheus({ now: true, seen: true });
    const h = await harness({ PROMETHEUS_URL: prom.url });
    await h.send(FIRING);
    await h.send(RESOLVED);
    expect(prom.requests).toHaveLength(0);
    expect((await h.send(FIRING)).body).toMatchObject({ notified: 1 });
    expect(h.statuses()[1]).toEqual(['firing', 'resolved', 'firing']);
    const queries = prom.requests.map((r) => new URL(r.path, 'http://x').searchParams.get('query')).sort();
    expect(queries[0]).toBe('ALERTS{alertname="VLLMKVCacheNearlyFull",alertstate="firing"}');
    expect(queries[1]).toMatch(
      /^max_over_time\(ALERTS\{alertname="VLLMKVCacheNearlyFull",alertstate="firing"\}\[\d+s\]\)$/,
    );
    // Only candidate re-fires query: the resend of the re-fire does not.
    await h.send(FIRING);
    expect(prom.requests).toHaveLength(2);
  });

  it('is a stale copy, not sent, when Prometheus says it no longer fires; the history says why', async () => {
    const prom = await prometheus({ now: false, seen: true });
    const h = await harness({ PROMETHEUS_URL: prom.url });
    await h.send(FIRING);
    await h.send(RESOLVED);
    expect(await h.send(FIRING)).toMatchObject({ status: 200, body: { notified: 0, stale: 1 } });
    expect(h.statuses()).toEqual([
      ['firing', 'resolved'],
      ['firing', 'resolved'],
    ]);
    const { history } = await h.history();
    expect(history.at(-1)).toMatchObject({
      type: 'not announced',
      status: 'firing',
      decision: 'stale copy',
      reason: 'prometheus says it is resolved',
      startsAt: T,
    });
  });

  it('is announced when Prometheus is unreachable, and the log says so', async () => {
    const h = await harness({ PROMETHEUS_URL: 'http://127.0.0.1:9' });
    await h.send(FIRING);
    await h.send(RESOLVED);
    expect((await h.send(FIRING)).body).toMatchObject({ notified: 1 });
    expect(h.logs.find((l) => l.event === 'alert state unknown, announcing it firing again')?.reason).toMatch(
      /Prometheus query failed/,
    );
  });

  it('asks Alertmanager when Prometheus never saw the alert, and follows it', async () => {
    const prom = await prometheus({ now: false, seen: false });
    const listed = await alertmanager(true);
    const h = await harness({ PROMETHEUS_URL: prom.url, ALERTMANAGER_URL: listed.url });
    await h.send(FIRING);
    await h.send(RESOLVED);
    expect((await h.send(FIRING)).body).toMatchObject({ notified: 1 });
    expect(listed.requests.map((r) => r.path)).toEqual([
      '/api/v2/alerts?filter=alertname%3D%22VLLMKVCacheNearlyFull%22',
    ]);

    const gone = await alertmanager(false);
    const h2 = await harness({ ALERTMANAGER_URL: gone.url });
    await h2.send(FIRING);
    await h2.send(RESOLVED);
    expect((await h2.send(FIRING)).body).toMatchObject({ notified: 0, stale: 1 });
    expect((await h2.history()).history.at(-1)).toMatchObject({
      type: 'not announced',
      reason: 'alertmanager says it is resolved',
    });
  });

  it('drops a lagging copy of the first resolve after the re-fire (same endsAt) while Prometheus says it fires', async () => {
    const state = { now: true, seen: true };
    const prom = await prometheus(state);
    const h = await harness({ PROMETHEUS_URL: prom.url });
    await h.send(FIRING);
    await h.send(RESOLVED);
    await h.send(FIRING);
    expect((await h.send(RESOLVED)).body).toMatchObject({ notified: 0, stale: 1 });
    expect(h.statuses()[0]).toEqual(['firing', 'resolved', 'firing']);
    expect((await h.history()).history.at(-1)).toMatchObject({
      type: 'not announced',
      status: 'resolved',
      reason: 'prometheus says it still fires',
    });
    // The same resolve once Prometheus has resolved it too (a lagging peer's firing was confirmed, then its resolve came): announced.
    state.now = false;
    expect((await h.send(RESOLVED)).body).toMatchObject({ notified: 1 });
    expect(h.statuses()[0]).toEqual(['firing', 'resolved', 'firing', 'resolved']);
  });

  it('keeps FIRING when no source can say whether such a resolve is stale (the lesser error)', async () => {
    const h = await harness();
    await h.send(FIRING);
    await h.send(RESOLVED);
    await h.send(FIRING);
    expect((await h.send(RESOLVED)).body).toMatchObject({ notified: 0, stale: 1 });
    expect((await h.history()).history.at(-1)).toMatchObject({
      type: 'not announced',
      status: 'resolved',
      reason: expect.stringMatching(/no source of truth says it resolved/),
    });
  });
});
