/**
 * Heartbeats from anyone who reaches an Alertmanager's API (no authentication by default): any
 * `externalURL` or fingerprint length, any number of alerts named `Watchdog`. None can switch the
 * dead-man's switch off, block the group it arrives in, or turn into pages and series without bound.
 * The real app and pipeline on dynalite, a recording channel, a clock the test moves.
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Channel } from '../../shared/channels/channel.js';
import { createLogger } from '../../shared/core/logger.js';
import { checkHeartbeats } from '../../shared/heartbeat/check.js';
import { heartbeatReceiver, type HeartbeatRecognition } from '../../shared/heartbeat/receive.js';
import { createApp } from '../../shared/http/app.js';
import { prometheusMetrics } from '../../shared/metrics/prometheus.js';
import type { PipelineDeps } from '../../shared/pipeline/index.js';
import type { Notification } from '../../shared/render/notification.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { DynamoDbHeartbeatStore, type HeartbeatStore } from '../../shared/store/heartbeat.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { fixture } from '../helpers/fixtures.js';

const AM = 'http://alertmanager-1.example:9093';
const FP = 'e0b1d0e8a1f2c3d4';
const TIMEOUT_S = 600;
const MAX = 20;
let db: LocalDynamoDb;
let tables = 0;
let tableName: string;
let sent: Notification[];
let clock: number;
let store: DynamoDbHeartbeatStore;
let pipeline: PipelineDeps;
let prom: ReturnType<typeof prometheusMetrics>;
let logs: Record<string, unknown>[];

beforeAll(async () => {
  db = await startLocalDynamoDb('heartbeat-untrusted-0');
});
afterAll(async () => db.close());

beforeEach(async () => {
  tableName = `heartbeat-untrusted-${++tables}`;
  await ensureTable(db.client, tableName);
  logs = [];
  sent = [];
  clock = Date.parse('2026-11-30T12:00:00Z');
  store = new DynamoDbHeartbeatStore(db.client, tableName, MAX);
  prom = prometheusMetrics();
  const channel: Channel = { name: 'slack', send: async (n) => void sent.push(n) };
  pipeline = testDeps({
    table: { client: db.client, tableName },
    channels: [channel],
    logger,
    now: () => clock,
    metrics: prom.metrics,
  });
});

const logger = createLogger('info', (line) => logs.push(JSON.parse(line) as Record<string, unknown>));
const events = (event: string) => logs.filter((l) => l.event === event);

function app(recognition: Partial<HeartbeatRecognition> = {}, s: Pick<HeartbeatStore, 'seen'> = store) {
  const heartbeat = heartbeatReceiver({
    recognition: { alertname: 'Watchdog', maxClusters: MAX, ...recognition },
    store: s,
    metrics: prom.metrics,
    now: () => clock,
    logger,
  });
  return createApp({ allowUnauthenticated: true }, { ...pipeline, heartbeat });
}

function watchdog(externalURL = AM, fingerprint = FP, labels: Record<string, string> = {}) {
  const message = fixture('firing-kv-cache-critical');
  return {
    ...message,
    externalURL,
    groupKey: '{}:{alertname="Watchdog"}',
    groupLabels: { alertname: 'Watchdog' },
    commonLabels: { alertname: 'Watchdog' },
    alerts: [
      {
        ...message.alerts[0]!,
        labels: { alertname: 'Watchdog', severity: 'none', ...labels } as Record<string, string>,
        annotations: {},
        fingerprint,
      },
    ],
  };
}

const post = (a: ReturnType<typeof app>, body: unknown) =>
  a.request('/v1/alertmanager', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
const check = (pin: { fingerprints?: string[]; externalUrls?: string[] } = {}) =>
  checkHeartbeats({
    store,
    pipeline,
    settings: { alertname: 'Watchdog', timeoutSeconds: TIMEOUT_S, ...pin },
    metrics: prom.metrics,
    logger,
    now: () => clock,
  });
const scrape = async () => (await prom.scrape()).body;

/** Two deliveries a minute apart, as Alertmanager repeats a heartbeat. */
async function establish(a: ReturnType<typeof app>, externalURL = AM, fingerprint = FP) {
  expect((await post(a, watchdog(externalURL, fingerprint))).status).toBe(200);
  clock += 60_000;
  expect((await post(a, watchdog(externalURL, fingerprint))).status).toBe(200);
}

describe('heartbeat keys', () => {
  it('hold an externalURL and a fingerprint of any length: recorded, and raised when they go silent', async () => {
    const longUrl = `http://alertmanager.example/${'a'.repeat(3000)}`;
    const longFp = 'f'.repeat(3000);
    const a = app();
    await establish(a, longUrl, FP);
    await establish(a, AM, longFp);
    clock += TIMEOUT_S * 1000 + 1000;
    const states = await check();
    expect(Object.values(states)).toEqual(['raised', 'raised']);
    expect(sent).toHaveLength(2);
    const raised = sent.map((n) => n.alerts[0]!.labels);
    expect(raised.map((l) => l.alertmanager)).toContainEqual(expect.stringMatching(/^sha256:[0-9a-f]{64}$/));
    expect(raised.map((l) => l.heartbeat_fingerprint)).toContainEqual(expect.stringMatching(/^sha256:[0-9a-f]{64}$/));
    expect(await scrape()).toContain('llm_alert_pipeline_heartbeat_missing{alertmanager=""} 1');
  });

  it('never block the group they arrive in: a poisoned Watchdog beside a critical alert', async () => {
    const body = watchdog(`http://x/${'y'.repeat(5000)}`, 'g'.repeat(5000));
    body.alerts.push(...fixture('firing-kv-cache-critical').alerts);
    const res = await post(app(), body);
    expect(res.status).toBe(200);
    expect(sent.map((n) => n.alerts.map((a) => a.labels.alertname))).toEqual([['VLLMKVCacheNearlyFull']]);
  });

  it('a store that fails on the heartbeat leaves the group delivered; the answer asks for the retry', async () => {
    const failing = { seen: async () => Promise.reject(new Error('ProvisionedThroughputExceededException')) };
    const body = watchdog();
    body.alerts.push(...fixture('firing-kv-cache-critical').alerts);
    const a = app({}, failing);
    expect((await post(a, body)).status).toBe(503);
    expect(sent).toHaveLength(1);
    expect(events('heartbeat not recorded')).toHaveLength(1);
    expect((await post(app(), body)).status).toBe(200); // the retry: recorded, nothing sent twice
    expect(sent).toHaveLength(1);
  });

  it('a list entry whose record could never be written (a 3,000-character fingerprint) does not stop the check', async () => {
    const doc = DynamoDBDocumentClient.from(db.client);
    const poisoned = 'p'.repeat(3000);
    await doc.send(
      new PutCommand({ TableName: tableName, Item: { pk: 'heartbeats', watchdogs: new Set([poisoned]) } }),
    );
    await establish(app());
    clock += TIMEOUT_S * 1000 + 1000;
    expect(await check()).toEqual({ [AM]: 'raised' });
    expect(await scrape()).toContain(`llm_alert_pipeline_heartbeat_missing{alertmanager="${AM}"} 1`);
    expect((await store.snapshot(clock)).watchdogs.map((w) => w.fingerprint)).toEqual([FP]);
  });
});

describe('alerts named Watchdog that are not the expected heartbeat', () => {
  it('are capped (HEARTBEAT_MAX_CLUSTERS), loudly; once-delivered ones are forgotten, never paged', async () => {
    const a = app();
    await establish(a);
    for (let i = 0; i < 60; i++) {
      const fp = i.toString(16).padStart(16, '0');
      expect((await post(a, watchdog(`http://fake-${i}.example`, fp, { i: String(i) }))).status).toBe(200);
    }
    const snapshot = await store.snapshot(clock);
    expect(snapshot.watchdogs.length).toBeLessThanOrEqual(MAX);
    expect(snapshot.peers.length).toBeLessThanOrEqual(MAX);
    expect(events('heartbeat not recorded').length).toBeGreaterThan(0);
    expect(String(events('heartbeat not recorded')[0]!.fix)).toContain('HEARTBEAT_MAX_CLUSTERS');
    expect(await scrape()).toMatch(/llm_alert_pipeline_heartbeats_ignored_total\{reason="too_many"\} [1-9]/);
    const lastSeenSeries = (text: string) =>
      text.split('\n').filter((l) => l.startsWith('llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds{'));
    expect(lastSeenSeries(await scrape()).length).toBeLessThanOrEqual(MAX);

    clock += TIMEOUT_S * 1000 + 1000;
    const states = await check();
    expect(states[AM]).toBe('raised'); // the real, repeating heartbeat still pages
    expect(Object.values(states).filter((s) => s === 'forgotten').length).toBe(MAX - 1);
    expect(sent).toHaveLength(1);
    expect(events('heartbeat forgotten')).toHaveLength(MAX - 1);
    const after = await store.snapshot(clock);
    expect(after.watchdogs.map((w) => w.fingerprint)).toEqual([FP]);
    expect(after.peers.map((p) => p.alertmanager)).toEqual([AM]);
    expect(lastSeenSeries(await scrape())).toHaveLength(1);
    // Room again for a real one.
    expect((await post(a, watchdog('http://alertmanager-2.example:9093', '2222222222222222'))).status).toBe(200);
    expect((await store.snapshot(clock)).watchdogs).toHaveLength(2);
  });

  it('from an Alertmanager not in HEARTBEAT_EXTERNAL_URLS: ignored, counted, never sent', async () => {
    const a = app({ externalUrls: [`${AM}/`] });
    await post(a, watchdog('http://stranger.example:9093'));
    await post(a, watchdog(AM));
    expect((await store.snapshot(clock)).peers.map((p) => p.alertmanager)).toEqual([AM]);
    expect(events('heartbeat ignored')).toEqual([
      expect.objectContaining({ reason: 'unexpected_alertmanager', alertmanager: 'http://stranger.example:9093' }),
    ]);
    expect(await scrape()).toContain('llm_alert_pipeline_heartbeats_ignored_total{reason="unexpected_alertmanager"} 1');
    expect(sent).toEqual([]);
  });

  it('that took every place before the pin: HEARTBEAT_FINGERPRINTS frees them, pages resolved, the real one watched', async () => {
    const a = app();
    const fakes = Array.from({ length: MAX }, (_, i) => i.toString(16).padStart(16, '0'));
    for (const fp of fakes) await establish(a, `http://fake-${fp}.example`, fp);
    // The real heartbeat comes too late: no place left, loudly.
    await establish(a);
    expect(events('heartbeat not recorded').length).toBeGreaterThan(0);
    // The fakes stop: each raises its missing-heartbeat alert.
    clock += TIMEOUT_S * 1000 + 1000;
    expect(Object.values(await check()).filter((s) => s === 'raised')).toHaveLength(MAX);
    expect(sent).toHaveLength(MAX);

    // Pinned to the real one (as the log line says): the raised alerts are resolved, then the records forgotten.
    const pinned = app({ fingerprints: [FP] });
    const first = await check({ fingerprints: [FP] });
    expect(Object.values(first).filter((s) => s === 'resolved')).toHaveLength(MAX);
    expect(sent.slice(MAX).map((n) => n.alerts[0]!.status)).toEqual(Array(MAX).fill('resolved'));
    const second = await check({ fingerprints: [FP] });
    expect(Object.values(second).filter((s) => s === 'forgotten')).toHaveLength(MAX);
    expect((await store.snapshot(clock)).watchdogs).toEqual([]);
    // The real one is recorded again, watched, and pages when it stops; the fakes never again.
    await establish(pinned);
    expect((await store.snapshot(clock)).watchdogs.map((w) => w.fingerprint)).toEqual([FP]);
    clock += TIMEOUT_S * 1000 + 1000;
    expect(Object.values(await check({ fingerprints: [FP] }))).toEqual(['raised']);
    expect(sent.slice(2 * MAX).map((n) => [n.alerts[0]!.labels.heartbeat_fingerprint, n.alerts[0]!.status])).toEqual([
      [FP, 'firing'],
    ]);
  });

  it('with a fingerprint not in HEARTBEAT_FINGERPRINTS: ignored, counted, never sent', async () => {
    const a = app({ fingerprints: [FP] });
    await post(a, watchdog(AM, 'ffffffffffffffff', { extra: 'x' }));
    await post(a, watchdog(AM, FP));
    expect((await store.snapshot(clock)).watchdogs.map((w) => w.fingerprint)).toEqual([FP]);
    expect(await scrape()).toContain('llm_alert_pipeline_heartbeats_ignored_total{reason="unexpected_fingerprint"} 1');
    expect(sent).toEqual([]);
  });
});
