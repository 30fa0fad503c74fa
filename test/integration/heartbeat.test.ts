/**
 * The dead-man's switch in process: the real app and pipeline on dynalite, a recording channel,
 * a clock the test moves. Heartbeats are recorded and never sent; a silent Alertmanager raises
 * AlertingPipelineHeartbeatMissing once, and its return resolves it once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import type { Channel } from '../../shared/channels/channel.js';
import { DynamoDbDedupeStore } from '../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { checkHeartbeats } from '../../shared/heartbeat/check.js';
import { heartbeatReceiver } from '../../shared/heartbeat/receive.js';
import { DynamoDbHeartbeatStore } from '../../shared/store/heartbeat.js';
import { silentLogger } from '../../shared/core/logger.js';
import { prometheusMetrics } from '../../shared/metrics/prometheus.js';
import type { Notification } from '../../shared/render/notification.js';
import type { PipelineDeps } from '../../shared/pipeline/index.js';
import { fixture } from '../helpers/fixtures.js';

const AM = 'http://alertmanager-1.example:9093';
const TIMEOUT_S = 600;
let db: LocalDynamoDb;
let tables = 0;
let sent: Notification[];
let clock: number;
let store: DynamoDbHeartbeatStore;
let pipeline: PipelineDeps;
let prom: ReturnType<typeof prometheusMetrics>;

beforeAll(async () => {
  db = await startLocalDynamoDb('heartbeat-0');
});
afterAll(async () => db.close());

beforeEach(async () => {
  const tableName = `heartbeat-${++tables}`;
  await ensureTable(db.client, tableName);
  sent = [];
  clock = Date.parse('2026-11-30T12:00:00Z');
  store = new DynamoDbHeartbeatStore(db.client, tableName);
  prom = prometheusMetrics();
  const channel: Channel = { name: 'slack', send: async (n) => void sent.push(n) };
  pipeline = {
    store: new DynamoDbDedupeStore(db.client, { tableName, ttlSeconds: 3600 }),
    channels: [channel],
    enrich: async () => new Map(),
    delivery: { timeoutMs: 1000, retries: 0 },
    logger: silentLogger,
    now: () => clock,
    metrics: prom.metrics,
  };
});

function app(alertname = 'Watchdog') {
  return createApp({ allowUnauthenticated: true }, { ...pipeline, heartbeat: heartbeatReceiver(alertname, store, prom.metrics, () => clock) });
}

function watchdog(externalURL = AM, status: 'firing' | 'resolved' = 'firing') {
  const message = fixture('firing-kv-cache-critical');
  const labels: Record<string, string> = { alertname: 'Watchdog', severity: 'none' };
  return {
    ...message, externalURL, status, groupKey: '{}/{alertname="Watchdog"}:{alertname="Watchdog"}', groupLabels: { alertname: 'Watchdog' }, commonLabels: labels,
    alerts: [{ ...message.alerts[0]!, status, labels, annotations: {} as Record<string, string>, fingerprint: 'e0b1d0e8a1f2c3d4' }],
  };
}

const post = (a: ReturnType<typeof app>, body: unknown) => a.request('/v1/alertmanager', { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const check = () => checkHeartbeats({ store, pipeline, settings: { alertname: 'Watchdog', timeoutSeconds: TIMEOUT_S }, metrics: prom.metrics, logger: silentLogger, now: () => clock });

describe('heartbeat alerts', () => {
  it('are recorded per Alertmanager and never sent to a channel', async () => {
    const res = await post(app(), watchdog());
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: 1, notified: 0, ok: true, heartbeat: true });
    expect(sent).toEqual([]);
    expect(await store.all()).toEqual([{ alertmanager: AM, lastSeenMs: clock }]);
    expect((await prom.scrape()).body).toContain(`llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds{alertmanager="${AM}"} ${clock / 1000}`);
  });

  it('leave the other alerts of their group to the pipeline', async () => {
    const body = watchdog();
    body.alerts.push(...fixture('firing-kv-cache-critical').alerts);
    expect((await post(app(), body)).status).toBe(200);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.alerts.map((a) => a.labels.alertname)).toEqual(['VLLMKVCacheNearlyFull']);
    expect(await store.all()).toHaveLength(1);
  });

  it('count only when firing: a resolved Watchdog means its rule stopped', async () => {
    await post(app(), watchdog(AM, 'resolved'));
    expect(await store.all()).toEqual([]);
    expect(sent).toEqual([]);
  });

  it('go to the channels like any alert when heartbeats are off (HEARTBEAT_ALERTNAME="")', async () => {
    const a = createApp({ allowUnauthenticated: true }, pipeline);
    await post(a, watchdog());
    expect(sent.map((n) => n.alerts[0]!.labels.alertname)).toEqual(['Watchdog']);
  });
});

describe('the heartbeat check', () => {
  it('raises AlertingPipelineHeartbeatMissing once after the timeout, and resolves it once heartbeats return', async () => {
    const a = app();
    await post(a, watchdog());
    clock += TIMEOUT_S * 1000;
    expect(await check()).toEqual({ [AM]: 'ok' });
    expect(sent).toEqual([]);

    clock += 1000;
    expect(await check()).toEqual({ [AM]: 'raised' });
    expect(sent).toHaveLength(1);
    const alert = sent[0]!.alerts[0]!;
    expect(sent[0]!.status).toBe('firing');
    expect(alert.labels).toEqual({ alertname: 'AlertingPipelineHeartbeatMissing', alertmanager: AM, severity: 'critical' });
    expect(alert.annotations.summary).toBe(`No Watchdog heartbeat from Alertmanager ${AM} since 2026-11-30T12:00:00.000Z`);
    expect((await prom.scrape()).body).toContain(`llm_alert_pipeline_heartbeat_missing{alertmanager="${AM}"} 1`);

    clock += 60_000;
    expect(await check()).toEqual({ [AM]: 'missing' });
    expect(sent).toHaveLength(1); // still firing: the dedupe ledger absorbs the repeat

    await post(a, watchdog());
    clock += 1000;
    expect(await check()).toEqual({ [AM]: 'resolved' });
    expect(sent).toHaveLength(2);
    expect(sent[1]!.status).toBe('resolved');
    expect(sent[1]!.alerts[0]!.fingerprint).toBe(alert.fingerprint);
    expect((await prom.scrape()).body).toContain(`llm_alert_pipeline_heartbeat_missing{alertmanager="${AM}"} 0`);

    expect(await check()).toEqual({ [AM]: 'ok' });
    expect(sent).toHaveLength(2);
  });

  it('watches each Alertmanager on its own, and none it never saw', async () => {
    expect(await check()).toEqual({});
    const a = app();
    await post(a, watchdog(AM));
    clock += 400_000;
    await post(a, watchdog('http://alertmanager-2.example:9093'));
    clock += 300_000;
    expect(await check()).toEqual({ [AM]: 'raised', 'http://alertmanager-2.example:9093': 'ok' });
    expect(sent.map((n) => n.alerts[0]!.labels.alertmanager)).toEqual([AM]);
  });

  it('keeps the resolve pending until every channel has it', async () => {
    let down = false;
    pipeline.channels = [{ name: 'slack', send: async (n) => { if (down) throw new Error('slack down'); sent.push(n); } }];
    const a = app();
    await post(a, watchdog());
    clock += TIMEOUT_S * 1000 + 1000;
    await check();
    await post(a, watchdog());
    down = true;
    expect(await check()).toEqual({ [AM]: 'resolving' });
    down = false;
    expect(await check()).toEqual({ [AM]: 'resolved' });
    expect(sent.map((n) => n.status)).toEqual(['firing', 'resolved']);
  });
});
