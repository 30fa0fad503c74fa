/**
 * A storm's one PagerDuty alert follows its alerts, through the real app (`loadConfig` → `createDeps` →
 * `createApp`, dynalite, the acknowledgement page) and the loopback Events API v2 stand-in:
 * - a 60-alert storm opens one PagerDuty alert (`group/<hash>`); Alertmanager reports the recovery in
 *   batches none of which is storm-sized (some resolved while others still fire, then the rest, a batch
 *   repeated as an HA peer repeats it): no event goes out under a per-alert key PagerDuty never saw, and
 *   the storm's alert resolves once, when its last alert resolves;
 * - a batch may come under another group key (Alertmanager regrouped): the same;
 * - acknowledging the storm's alerts on the page, one alert or the whole set, sends ONE acknowledge for
 *   the storm's key; so does "Acknowledge all" of a 600-alert storm worked through as a paced job, whose
 *   pacing waits for the events it sends, not for 600.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledge } from '../../shared/ack/acknowledge.js';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { silentLogger } from '../../shared/core/logger.js';
import { createDeps, type RuntimeClients } from '../../shared/runtime/deps.js';
import { runSetStep } from '../../shared/ack/set-job.js';
import { groupDedupKey } from '../../shared/channels/pagerduty/dedup-key.js';
import type { WebhookMessage } from '../../shared/alertmanager/schema.js';
import { startPagerDutyPlatform, type PagerDutyPlatform } from './channels/platforms.js';
import { ACK_SECRET, FormClient, PUBLIC_URL, WEBHOOK_TOKEN } from './ack-harness.js';
import { stormWebhook } from './storm-webhook.js';

const ROUTING_KEY = 'e93facc04764012d7bfb002500d5d1a6';
const ENDS_AT = '2026-11-29T13:10:00Z';
let db: LocalDynamoDb;
let pd: PagerDutyPlatform;
let tables = 0;

beforeAll(async () => {
  [db, pd] = await Promise.all([startLocalDynamoDb('pagerduty-storm'), startPagerDutyPlatform()]);
});
afterAll(async () => Promise.all([db.close(), pd.close()]));

async function app(clients: { ackSetSteps?: RuntimeClients['ackSetSteps'] } = {}) {
  const tableName = `pd-storm-${++tables}`;
  await ensureTable(db.client, tableName);
  const config = loadConfig({
    PUBLIC_URL,
    ACK_SECRET,
    WEBHOOK_TOKEN,
    TABLE_NAME: tableName,
    PAGERDUTY_ROUTING_KEY: ROUTING_KEY,
    PAGERDUTY_EVENTS_URL: pd.url,
    DELIVERY_RETRIES: '0',
  });
  const deps = createDeps(config, { dynamodb: db.client, inProcessTimers: false, ...clients }, silentLogger);
  const hono = createApp(config, deps);
  const webhook = async (body: unknown) => {
    const res = await hono.request('/v1/alertmanager', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
    });
    expect(res.status).toBe(200);
  };
  return { hono, webhook, ackDeps: deps.ackPage! };
}

/** The storm's body with `resolved` alerts (by index) resolved and `firing` ones still firing, nothing else. */
function batch(
  storm: WebhookMessage,
  { resolved, firing = [], groupKey }: { resolved: number[]; firing?: number[]; groupKey?: string },
): WebhookMessage {
  const alerts = [
    ...firing.map((i) => storm.alerts[i]!),
    ...resolved.map((i) => ({ ...storm.alerts[i]!, status: 'resolved' as const, endsAt: ENDS_AT })),
  ];
  return {
    ...storm,
    ...(groupKey && { groupKey }),
    status: firing.length ? 'firing' : 'resolved',
    alerts,
  };
}
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const since = (start: number) => pd.accepted.slice(start).map((e) => `${e.event_action} ${e.dedup_key}`);

describe('a PagerDuty storm alert', () => {
  it('resolves once, when the last of its 60 alerts resolves, however Alertmanager batches the resolves', async () => {
    const { webhook } = await app();
    const storm = stormWebhook(60);
    const key = groupDedupKey(storm.groupKey);
    const start = pd.accepted.length;
    await webhook(storm);
    expect(since(start)).toEqual([`trigger ${key}`]);

    // 20 resolved while 40 still fire (Alertmanager lists the firing ones again), then 20 more, then the rest.
    await webhook(batch(storm, { resolved: range(0, 20), firing: range(20, 60) }));
    await webhook(batch(storm, { resolved: range(20, 40) }));
    expect(since(start)).toEqual([`trigger ${key}`]);
    await webhook(batch(storm, { resolved: range(40, 60) }));
    // An HA peer's copy of the last batch.
    await webhook(batch(storm, { resolved: range(40, 60) }));
    expect(since(start)).toEqual([`trigger ${key}`, `resolve ${key}`]);
  });

  it('stays open through a storm-sized batch of resolves that leaves some of its alerts firing', async () => {
    const { webhook } = await app();
    const storm = stormWebhook(60, 0, '2026-11-29T12:45:00.000Z');
    const key = groupDedupKey(storm.groupKey);
    const start = pd.accepted.length;
    await webhook(storm);
    await webhook(batch(storm, { resolved: range(0, 55) }));
    expect(since(start)).toEqual([`trigger ${key}`]);
    await webhook(batch(storm, { resolved: range(55, 60) }));
    expect(since(start)).toEqual([`trigger ${key}`, `resolve ${key}`]);
  });

  it('resolves when its last alerts resolve under another group key (Alertmanager regrouped them)', async () => {
    const { webhook } = await app();
    const storm = stormWebhook(60, 0, '2026-11-29T12:50:00.000Z');
    const key = groupDedupKey(storm.groupKey);
    const start = pd.accepted.length;
    await webhook(storm);
    await webhook(batch(storm, { resolved: range(0, 30), groupKey: '{}:{cluster="prod-eu", job="vllm"}' }));
    expect(since(start)).toEqual([`trigger ${key}`]);
    await webhook(batch(storm, { resolved: range(30, 60), groupKey: '{}:{alertname="VLLMQueueBacklog"}' }));
    expect(since(start)).toEqual([`trigger ${key}`, `resolve ${key}`]);
  });

  it('is acknowledged by ONE event for its key when its alerts are acknowledged on the page, one or all', async () => {
    const { hono, webhook } = await app();
    const storm = stormWebhook(60, 0, '2026-11-29T12:55:00.000Z');
    const key = groupDedupKey(storm.groupKey);
    const start = pd.accepted.length;
    await webhook(storm);
    const trigger = pd.accepted.at(-1)!;
    // The storm's Acknowledge link names the whole set.
    const link = trigger.links?.find((l) => l.text === 'Acknowledge');
    expect(link?.href.startsWith(`${PUBLIC_URL}/v1/ack/`)).toBe(true);
    const path = new URL(link!.href).pathname;
    const browser = new FormClient(hono);
    expect((await browser.open(path)).status).toBe(200);
    expect((await browser.submit(path, { name: 'alice' })).status).toBe(200);
    expect(since(start)).toEqual([`trigger ${key}`, `acknowledge ${key}`]);
  });

  it('is acknowledged by one event for its key when one of its alerts is acknowledged (as the Slack button does)', async () => {
    const { webhook, ackDeps } = await app();
    const storm = stormWebhook(60, 0, '2026-11-29T12:58:00.000Z');
    const key = groupDedupKey(storm.groupKey);
    const start = pd.accepted.length;
    await webhook(storm);
    const nowSec = Math.floor(Date.now() / 1000);
    const claims = {
      fingerprints: [storm.alerts[7]!.fingerprint],
      group: storm.groupKey,
      channel: 'pagerduty',
      issuedAt: nowSec,
      expiresAt: nowSec + 3600,
    };
    const result = await acknowledge(claims, { by: 'bob' }, ackDeps);
    expect(result.followUps).toEqual({ pagerduty: true });
    expect(since(start)).toEqual([`trigger ${key}`, `acknowledge ${key}`]);
  });

  it('is acknowledged by ONE event for its key when "Acknowledge all 600" runs as a paced job', async () => {
    const invocations: string[] = [];
    const lambda = {
      send: async (command: { input: { Payload?: Uint8Array } }) => {
        invocations.push(JSON.parse(new TextDecoder().decode(command.input.Payload)).ackSetStep);
        return {};
      },
    } as never;
    const { hono, webhook, ackDeps } = await app({ ackSetSteps: { functionName: () => 'receiver', lambda } });
    const waits: number[] = [];
    const setJobs = ackDeps.setJobs!;
    const deps = setJobs.deps;
    setJobs.deps = () => ({ ...deps(), stepAlerts: 250, sleep: async (ms: number) => void waits.push(ms) });
    const storm = stormWebhook(600, 0, '2026-11-29T13:01:00.000Z');
    const key = groupDedupKey(storm.groupKey);
    const start = pd.accepted.length;
    await webhook(storm);
    const link = pd.accepted.at(-1)!.links?.find((l) => l.text === 'Acknowledge');
    const path = new URL(link!.href).pathname;
    const browser = new FormClient(hono);
    await browser.open(path);
    expect((await browser.submit(path, { name: 'carol' })).status).toBe(200);
    let steps = 0;
    while (invocations.length) {
      const id = invocations.shift()!;
      steps += 1;
      if ((await runSetStep(id, setJobs.deps())) === 'more') await setJobs.deps().dispatch(id);
    }
    expect(steps).toBeGreaterThan(3);
    expect(since(start)).toEqual([`trigger ${key}`, `acknowledge ${key}`]);
    // One event sent: the job waits for one event's interval at most, not for 600 events' (~10 minutes).
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1_000);
  }, 120_000);
});
