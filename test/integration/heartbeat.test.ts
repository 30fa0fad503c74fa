/**
 * The dead-man's switch in process: the real app and pipeline on dynalite, a recording channel,
 * a clock the test moves. Heartbeats are recorded and never sent; a silent Alertmanager raises
 * AlertingPipelineHeartbeatMissing once, and its return resolves it once. The peers of an HA cluster
 * (those that delivered the same Watchdog, by fingerprint) are watched as one; a heartbeat never
 * received warns once the check has been armed for a full timeout.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import type { Channel } from '../../shared/channels/channel.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { checkHeartbeats } from '../../shared/heartbeat/check.js';
import { heartbeatReceiver } from '../../shared/heartbeat/receive.js';
import { DynamoDbHeartbeatStore } from '../../shared/store/heartbeat.js';
import { createLogger } from '../../shared/core/logger.js';
import { prometheusMetrics } from '../../shared/metrics/prometheus.js';
import type { Notification } from '../../shared/render/notification.js';
import type { PipelineDeps } from '../../shared/pipeline/index.js';
import { fixture } from '../helpers/fixtures.js';

const AM = 'http://alertmanager-1.example:9093';
const AM2 = 'http://alertmanager-2.example:9093';
const WATCHDOG_FP = 'e0b1d0e8a1f2c3d4';
const TIMEOUT_S = 600;
let db: LocalDynamoDb;
let tables = 0;
let sent: Notification[];
let clock: number;
let store: DynamoDbHeartbeatStore;
let pipeline: PipelineDeps;
let prom: ReturnType<typeof prometheusMetrics>;
let logs: Record<string, unknown>[];
let tableName: string;

beforeAll(async () => {
  db = await startLocalDynamoDb('heartbeat-0');
});
afterAll(async () => db.close());

beforeEach(async () => {
  tableName = `heartbeat-${++tables}`;
  logs = [];
  await ensureTable(db.client, tableName);
  sent = [];
  clock = Date.parse('2026-11-30T12:00:00Z');
  store = new DynamoDbHeartbeatStore(db.client, tableName);
  prom = prometheusMetrics();
  const channel: Channel = { name: 'slack', send: async (n) => void sent.push(n) };
  pipeline = testDeps({
    table: { client: db.client, tableName },
    channels: [channel],
    now: () => clock,
    metrics: prom.metrics,
  });
});

function app(alertname = 'Watchdog') {
  return createApp(
    { allowUnauthenticated: true },
    {
      ...pipeline,
      heartbeat: heartbeatReceiver({
        recognition: { alertname, maxClusters: 20 },
        store,
        metrics: prom.metrics,
        now: () => clock,
        logger,
      }),
    },
  );
}

function watchdog(externalURL = AM, status: 'firing' | 'resolved' = 'firing', fingerprint = WATCHDOG_FP) {
  const message = fixture('firing-kv-cache-critical');
  const labels: Record<string, string> = { alertname: 'Watchdog', severity: 'none' };
  return {
    ...message,
    externalURL,
    status,
    groupKey: '{}/{alertname="Watchdog"}:{alertname="Watchdog"}',
    groupLabels: { alertname: 'Watchdog' },
    commonLabels: labels,
    alerts: [{ ...message.alerts[0]!, status, labels, annotations: {} as Record<string, string>, fingerprint }],
  };
}

/** Two deliveries a minute apart, as Alertmanager repeats a heartbeat: a heartbeat delivered once is not watched. */
async function establish(a: ReturnType<typeof app>, externalURL = AM, fingerprint = WATCHDOG_FP) {
  expect((await post(a, watchdog(externalURL, 'firing', fingerprint))).status).toBe(200);
  clock += 60_000;
  expect((await post(a, watchdog(externalURL, 'firing', fingerprint))).status).toBe(200);
}

const post = (a: ReturnType<typeof app>, body: unknown) =>
  a.request('/v1/alertmanager', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json' },
  });
const logger = createLogger('info', (line) => logs.push(JSON.parse(line) as Record<string, unknown>));
const check = (s = store) =>
  checkHeartbeats({
    store: s,
    pipeline,
    settings: { alertname: 'Watchdog', timeoutSeconds: TIMEOUT_S },
    metrics: prom.metrics,
    logger,
    now: () => clock,
  });
const scrape = async () => (await prom.scrape()).body;
const missingLabels = (alertmanager: string, fingerprint = WATCHDOG_FP) => ({
  alertname: 'AlertingPipelineHeartbeatMissing',
  alertmanager,
  heartbeat_fingerprint: fingerprint,
  severity: 'critical',
});

describe('heartbeat alerts', () => {
  it('are recorded per Alertmanager and never sent to a channel', async () => {
    const res = await post(app(), watchdog());
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ received: 1, notified: 0, ok: true, heartbeat: true });
    expect(sent).toEqual([]);
    expect(await store.snapshot(clock)).toEqual({
      armedSinceMs: clock,
      peers: [{ alertmanager: AM, lastSeenMs: clock }],
      // Delivered once: recorded, but not yet a heartbeat that repeats (see 'a heartbeat delivered once').
      watchdogs: [{ fingerprint: WATCHDOG_FP, lastSeenMs: clock, established: false, peers: [AM] }],
      unreadable: [],
    });
    expect((await prom.scrape()).body).toContain(
      `llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds{alertmanager="${AM}"} ${clock / 1000}`,
    );
    // A message of heartbeats only never reaches the pipeline's `group received`: its own line says it came.
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'info',
        event: 'heartbeat received',
        alertname: 'Watchdog',
        alertmanager: AM,
        fingerprints: [WATCHDOG_FP],
        pin: expect.stringMatching(new RegExp(`^HEARTBEAT_FINGERPRINTS=${WATCHDOG_FP} watches only these `)),
      }),
    ]);
  });

  it('leave the other alerts of their group to the pipeline', async () => {
    const body = watchdog();
    body.alerts.push(...fixture('firing-kv-cache-critical').alerts);
    expect((await post(app(), body)).status).toBe(200);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.alerts.map((a) => a.labels.alertname)).toEqual(['VLLMKVCacheNearlyFull']);
    expect((await store.snapshot(clock)).watchdogs).toHaveLength(1);
  });

  it('count only when firing: a resolved Watchdog means its rule stopped, which is logged as a warning', async () => {
    await post(app(), watchdog(AM, 'resolved'));
    expect(await store.snapshot(clock)).toMatchObject({ peers: [], watchdogs: [] });
    expect(sent).toEqual([]);
    // Often the first sign that Prometheus (or its rule evaluation) stopped: not silence in the log.
    expect(logs).toEqual([
      expect.objectContaining({
        level: 'warn',
        event: 'heartbeat resolved',
        alertname: 'Watchdog',
        alertmanager: AM,
        fingerprints: [WATCHDOG_FP],
      }),
    ]);
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
    await establish(a);
    clock += TIMEOUT_S * 1000;
    expect(await check()).toEqual({ [AM]: 'ok' });
    expect(sent).toEqual([]);

    clock += 1000;
    expect(await check()).toEqual({ [AM]: 'raised' });
    expect(sent).toHaveLength(1);
    const alert = sent[0]!.alerts[0]!;
    expect(sent[0]!.status).toBe('firing');
    expect(alert.labels).toEqual(missingLabels(AM));
    // Times as every other message writes them, not raw ISO.
    expect(alert.annotations.summary).toBe(
      `No Watchdog heartbeat from Alertmanager ${AM} since 2026-11-30 12:01:00 UTC`,
    );
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

  it('never marks its own alert flapping (a real outage after a blip must not be filtered away), and its resolve says when it was raised', async () => {
    const a = app();
    const outage = async () => {
      await establish(a);
      clock += TIMEOUT_S * 1000 + 1000;
      expect(await check()).toEqual({ [AM]: 'raised' });
      await post(a, watchdog());
      clock += 1000;
      expect(await check()).toEqual({ [AM]: 'resolved' });
    };
    await outage();
    const raisedAt = `${new Date(clock - 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
    expect(sent[1]!.alerts[0]!.annotations.summary).toBe(
      `Watchdog heartbeats from Alertmanager ${AM} are back; missing since the alert was raised at ${raisedAt}`,
    );
    await outage(); // within the 30-minute flap window of the first
    expect(sent.map((n) => n.status)).toEqual(['firing', 'resolved', 'firing', 'resolved']);
    expect(sent[2]!.flapping).toBeUndefined();
  });

  it('watches each heartbeat alert (Alertmanagers with their own Watchdog) on its own', async () => {
    const a = app();
    await establish(a, AM, '1111111111111111');
    clock += 400_000;
    await establish(a, AM2, '2222222222222222');
    clock += 300_000;
    expect(await check()).toEqual({ [AM]: 'raised', [AM2]: 'ok' });
    expect(sent.map((n) => n.alerts[0]!.labels)).toEqual([missingLabels(AM, '1111111111111111')]);
    const text = await scrape();
    expect(text).toContain(`llm_alert_pipeline_heartbeat_missing{alertmanager="${AM}"} 1`);
    expect(text).toContain(`llm_alert_pipeline_heartbeat_missing{alertmanager="${AM2}"} 0`);
    expect(text).toContain('llm_alert_pipeline_heartbeat_missing{alertmanager=""} 1');
  });

  it('keeps the resolve pending until every channel has it', async () => {
    let down = false;
    pipeline.channels = [
      {
        name: 'slack',
        send: async (n) => {
          if (down) throw new Error('slack down');
          sent.push(n);
        },
      },
    ];
    const a = app();
    await establish(a);
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

describe('an Alertmanager HA cluster (peers that delivered the same Watchdog fingerprint)', () => {
  it('is missing only when no peer delivered within the timeout; one peer back resolves it', async () => {
    const a = app();
    await post(a, watchdog(AM)); // start-up or failover: both peers were seen once
    await post(a, watchdog(AM2));
    for (let i = 0; i < 30; i++) {
      // then only one peer sends, as the notification log wants
      clock += 60_000;
      await post(a, watchdog(AM));
      expect(await check()).toEqual({ [`${AM},${AM2}`]: 'ok' });
    }
    expect(sent).toEqual([]);
    let text = await scrape();
    expect(text).toContain(`llm_alert_pipeline_heartbeat_missing{alertmanager="${AM2}"} 0`);
    expect(text).toContain('llm_alert_pipeline_heartbeat_missing{alertmanager=""} 0');
    // The per-peer gauge still says when each peer itself last delivered.
    expect(text).toContain(
      `llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds{alertmanager="${AM2}"} ${Date.parse('2026-11-30T12:00:00Z') / 1000}`,
    );

    clock += TIMEOUT_S * 1000 + 1000; // both stopped
    expect(await check()).toEqual({ [`${AM},${AM2}`]: 'raised' });
    expect(sent.map((n) => n.alerts[0]!.labels)).toEqual([missingLabels(`${AM},${AM2}`)]);
    text = await scrape();
    for (const am of [AM, AM2, ''])
      expect(text).toContain(`llm_alert_pipeline_heartbeat_missing{alertmanager="${am}"} 1`);

    await post(a, watchdog(AM2)); // the passive peer comes back alone
    clock += 1000;
    expect(await check()).toEqual({ [`${AM},${AM2}`]: 'resolved' });
    expect(sent.map((n) => n.status)).toEqual(['firing', 'resolved']);
    expect(sent[1]!.alerts[0]!.fingerprint).toBe(sent[0]!.alerts[0]!.fingerprint);
    expect(await scrape()).toContain('llm_alert_pipeline_heartbeat_missing{alertmanager=""} 0');
  });

  it('resolves with the labels it raised, though a peer joined the cluster meanwhile', async () => {
    const a = app();
    await establish(a, AM);
    clock += TIMEOUT_S * 1000 + 1000;
    expect(await check()).toEqual({ [AM]: 'raised' });
    await post(a, watchdog(AM2));
    clock += 1000;
    expect(await check()).toEqual({ [`${AM},${AM2}`]: 'resolved' });
    expect(sent.map((n) => [n.status, n.alerts[0]!.labels])).toEqual([
      ['firing', missingLabels(AM)],
      ['resolved', missingLabels(AM)],
    ]);
    expect(sent[1]!.alerts[0]!.fingerprint).toBe(sent[0]!.alerts[0]!.fingerprint);
  });
});

describe('a heartbeat never received', () => {
  const warnings = () => logs.filter((l) => l.event === 'heartbeat never received');

  it('warns on each check once armed for a full timeout, across a cold start, and sends nothing', async () => {
    expect(await check()).toEqual({ '': 'waiting' });
    clock += TIMEOUT_S * 1000;
    // A cold start: a new store object on the same table finds when the check was armed.
    const coldStore = new DynamoDbHeartbeatStore(db.client, tableName);
    expect(await check(coldStore)).toEqual({ '': 'waiting' });
    expect(warnings()).toEqual([]);
    expect(await scrape()).toContain('llm_alert_pipeline_heartbeat_missing{alertmanager=""} 0');

    clock += 1000;
    expect(await check(coldStore)).toEqual({ '': 'never_seen' });
    expect(await check(coldStore)).toEqual({ '': 'never_seen' });
    expect(warnings()).toHaveLength(2);
    expect(warnings()[0]).toMatchObject({
      level: 'warn',
      heartbeatAlertname: 'Watchdog',
      armedSince: '2026-11-30T12:00:00.000Z',
      timeoutSeconds: TIMEOUT_S,
    });
    expect(String(warnings()[0]!.fix)).toContain('HEARTBEAT_ALERTNAME');
    expect(String(warnings()[0]!.fix)).toContain('alertname="Watchdog"');
    expect(await scrape()).toContain('llm_alert_pipeline_heartbeat_missing{alertmanager=""} 1');
    expect(sent).toEqual([]);

    await post(app(), watchdog());
    expect(await check()).toEqual({ [AM]: 'ok' });
    expect(await scrape()).toContain('llm_alert_pipeline_heartbeat_missing{alertmanager=""} 0');
    expect(warnings()).toHaveLength(2);
  });
});

describe('an Alertmanager with an empty externalURL', () => {
  it('is named "(empty externalURL)", apart from the "any Alertmanager" series', async () => {
    await establish(app(), '');
    clock += TIMEOUT_S * 1000 + 1000;
    expect(await check()).toEqual({ '(empty externalURL)': 'raised' });
    expect(sent[0]!.alerts[0]!.labels.alertmanager).toBe('(empty externalURL)');
    const text = await scrape();
    expect(text).toContain('llm_alert_pipeline_heartbeat_missing{alertmanager="(empty externalURL)"} 1');
    expect(text).toMatch(
      /llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds\{alertmanager="\(empty externalURL\)"\} \d/,
    );
    expect(text).not.toMatch(/llm_alert_pipeline_heartbeat_last_seen_timestamp_seconds\{alertmanager=""\}/);
  });
});
