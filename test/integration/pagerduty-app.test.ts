/**
 * The PagerDuty channel through the real app: the configuration from `loadConfig`
 * (`PAGERDUTY_ROUTING_KEY`, `PAGERDUTY_EVENTS_URL`), the runtime's channels, the dedupe and alert
 * records on dynalite, the acknowledgement page; PagerDuty is the loopback stand-in that checks the
 * Events API v2 fields. Alertmanager posts firing, someone acknowledges on the page, Alertmanager
 * posts resolved: PagerDuty gets trigger → acknowledge → resolve under one `dedup_key`. A re-fire of
 * the same occurrence gets its own key, and its acknowledgement follows it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledge } from '../../shared/ack/acknowledge.js';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { createLogger, silentLogger } from '../../shared/core/logger.js';
import type { Metrics } from '../../shared/metrics/catalogue.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { fixture } from '../helpers/fixtures.js';
import { startPagerDutyPlatform, type PagerDutyPlatform } from './channels/platforms.js';
import { ACK_SECRET, FormClient, PUBLIC_URL, WEBHOOK_TOKEN } from './ack-harness.js';

const ROUTING_KEY = 'e93facc04764012d7bfb002500d5d1a6';
let db: LocalDynamoDb;
let pd: PagerDutyPlatform;
let tables = 0;

beforeAll(async () => {
  [db, pd] = await Promise.all([startLocalDynamoDb('pagerduty-app-0'), startPagerDutyPlatform()]);
});
afterAll(async () => Promise.all([db.close(), pd.close()]));

async function app(logger = silentLogger, metrics?: Metrics) {
  const tableName = `pd-app-${++tables}`;
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
  const deps = createDeps(config, { dynamodb: db.client, inProcessTimers: false, metrics }, logger);
  const hono = createApp(config, deps);
  const ackDeps = deps.ackPage!;
  const webhook = (body: unknown) =>
    hono.request('/v1/alertmanager', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
    });
  return { hono, webhook, ackDeps };
}

const firing = () => fixture('firing-kv-cache-critical');
const resolved = (endsAt: string) => {
  const m = firing();
  return { ...m, status: 'resolved', alerts: m.alerts.map((a) => ({ ...a, status: 'resolved', endsAt })) };
};

/** Acknowledges on the page the trigger's first link opens, as `by`. */
async function acknowledgeFrom(
  trigger: { links?: { href: string; text?: string }[] },
  hono: Awaited<ReturnType<typeof app>>['hono'],
  by: string,
) {
  const link = trigger.links?.find((l) => l.text === 'Acknowledge');
  expect(link?.href.startsWith(`${PUBLIC_URL}/v1/ack/`)).toBe(true);
  const path = new URL(link!.href).pathname;
  const browser = new FormClient(hono);
  expect((await browser.open(path)).status).toBe(200);
  expect((await browser.submit(path, { name: by })).status).toBe(200);
}

describe('PagerDuty through the app', () => {
  it('firing → acknowledged on the page → resolved: trigger → acknowledge → resolve with one dedup_key', async () => {
    const { hono, webhook } = await app();
    const start = pd.accepted.length;
    expect((await webhook(firing())).status).toBe(200);
    const [trigger] = pd.accepted.slice(start);
    expect(trigger).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      payload: {
        severity: 'critical',
        source: '127.0.0.1:9800',
        component: 'qwen3-8b',
        class: 'VLLMKVCacheNearlyFull',
      },
    });
    // Alertmanager's repeat (and an HA peer's copy) changes nothing at PagerDuty.
    expect((await webhook(firing())).status).toBe(200);
    expect(pd.accepted.length - start).toBe(1);

    await acknowledgeFrom(trigger!, hono, 'alice');
    expect((await webhook(resolved('2026-11-29T12:58:00Z'))).status).toBe(200);

    const events = pd.accepted.slice(start);
    expect(events.map((e) => e.event_action)).toEqual(['trigger', 'acknowledge', 'resolve']);
    expect(new Set(events.map((e) => e.dedup_key))).toEqual(new Set(['936e109b8c52c001/2026-11-29T12:42:23.143Z']));
    expect(events.every((e) => e.routing_key === ROUTING_KEY)).toBe(true);
    expect(events.slice(1)).toEqual([
      { routing_key: ROUTING_KEY, event_action: 'acknowledge', dedup_key: '936e109b8c52c001/2026-11-29T12:42:23.143Z' },
      { routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: '936e109b8c52c001/2026-11-29T12:42:23.143Z' },
    ]);
  });

  it('a re-fire of the same occurrence is a new PagerDuty alert (generation 1); its acknowledgement and resolve follow its key', async () => {
    const { hono, webhook } = await app();
    const start = pd.accepted.length;
    await webhook(firing());
    await webhook(resolved('2026-11-29T12:58:00Z'));
    // Same startsAt, firing again (a missed resend let Alertmanager resolve it); no source of truth: announced.
    expect((await webhook(firing())).status).toBe(200);
    const refire = pd.accepted.at(-1)!;
    expect(refire).toMatchObject({ event_action: 'trigger', dedup_key: '936e109b8c52c001/2026-11-29T12:42:23.143Z/1' });
    expect(refire.payload?.summary).toMatch(/^Firing again: /);
    await acknowledgeFrom(refire, hono, 'bob');
    await webhook(resolved('2026-11-29T13:30:00Z'));
    expect(pd.accepted.slice(start).map((e) => `${e.event_action} ${e.dedup_key}`)).toEqual([
      'trigger 936e109b8c52c001/2026-11-29T12:42:23.143Z',
      'resolve 936e109b8c52c001/2026-11-29T12:42:23.143Z',
      'trigger 936e109b8c52c001/2026-11-29T12:42:23.143Z/1',
      'acknowledge 936e109b8c52c001/2026-11-29T12:42:23.143Z/1',
      'resolve 936e109b8c52c001/2026-11-29T12:42:23.143Z/1',
    ]);
  });

  it('an acknowledgement made outside the page (as the Slack interaction makes it: acknowledge() with the verified claims) reaches PagerDuty too', async () => {
    const { webhook, ackDeps } = await app();
    await webhook(firing());
    const trigger = pd.accepted.at(-1)!;
    const nowSec = Math.floor(Date.now() / 1000);
    const claims = {
      fingerprints: ['936e109b8c52c001'],
      group: firing().groupKey,
      channel: 'slack',
      issuedAt: nowSec,
      expiresAt: nowSec + 3600,
    };
    const result = await acknowledge(claims, { by: 'U024BE7LH' }, ackDeps);
    expect(result.followUps).toEqual({ pagerduty: true });
    expect(pd.accepted.at(-1)).toEqual({
      routing_key: ROUTING_KEY,
      event_action: 'acknowledge',
      dedup_key: trigger.dedup_key,
    });
  });

  it('a 400 from PagerDuty is logged at error with its message, counted refused, answered 200 (a resend would be refused again), not retried', async () => {
    const lines: Record<string, unknown>[] = [];
    const counted: [string, Record<string, string>][] = [];
    const metrics = {
      inc: (name: string, labels: Record<string, string>) => void counted.push([name, labels]),
      observe: () => {},
      set: () => {},
    } as unknown as Metrics;
    const { webhook } = await app(
      createLogger('info', (l) => lines.push(JSON.parse(l) as Record<string, unknown>)),
      metrics,
    );
    const requests = pd.server.requests.length;
    pd.failWhen(() => true, 400);
    const res = await webhook(firing());
    expect(res.status).toBe(200);
    expect(pd.server.requests.length - requests).toBe(1);
    const refused = lines.find((l) => l.event === 'channel refused content');
    expect(refused).toMatchObject({
      level: 'error',
      channel: 'pagerduty',
      status: 'refused',
      fingerprints: ['936e109b8c52c001'],
    });
    expect(refused?.error).toMatch(
      /^pagerduty: PagerDuty refused 1 event\(s\): trigger 936e109b8c52c001\/\S+: HTTP 400: \{"status":"invalid event","message":"Event object is invalid"/,
    );
    expect(counted).toContainEqual([
      'notifications_total',
      { channel: 'pagerduty', outcome: 'failed', reason: 'content_refused' },
    ]);
    expect(JSON.stringify(lines)).not.toContain(ROUTING_KEY);
  });
});
