/**
 * `ESCALATION_CHANNELS`: escalation to a channel instance of the routing file by name, through the real
 * app and runtime (`loadConfig`, `createDeps`: the routing file's channels, the in-process escalation
 * timer) on dynalite, with loopback Feishu robots checking each wire format (signature). The routed chat
 * gets the alert by its route; the on-call chat, named only by `ESCALATION_CHANNELS`, gets the escalation
 * once, in Chinese, with an Acknowledge link of its own; the acknowledgement follows it there, and so does the
 * resolve (whoever was paged hears it is over), besides where the alert's routes send it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAckToken } from '../../shared/ack/token.js';
import { silentLogger } from '../../shared/core/logger.js';
import { Secret } from '../../shared/core/secret.js';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { alertStores } from '../../shared/store/alert-stores.js';
import { MAX_TRACKED_FIRINGS } from '../../shared/pipeline/flap.js';
import type { Metrics } from '../../shared/metrics/catalogue.js';
import { prometheusMetrics } from '../../shared/metrics/prometheus.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { fixture } from '../helpers/fixtures.js';
import { pollUntil } from '../helpers/processes.js';
import { ACK_SECRET, FormClient, PUBLIC_URL, WEBHOOK_TOKEN } from './ack-harness.js';
import { startFeishuPlatform, type FeishuPlatform } from './channels/platforms.js';

const FP = '936e109b8c52c001';
const ONCALL_SECRET = 'oncall-feishu-signing-secret';
const ROUTING = `
channels:
  team-feishu: { type: feishu, webhookUrl: { secret: FEISHU_TEAM_URL } }
  oncall-feishu:
    type: feishu
    webhookUrl: { secret: FEISHU_ONCALL_URL }
    signingSecret: { secret: FEISHU_ONCALL_SECRET }
default:
  channels: [team-feishu]
`;

let db: LocalDynamoDb;
let team: FeishuPlatform;
let oncall: FeishuPlatform;
let dir: string;

beforeAll(async () => {
  [db, team, oncall] = await Promise.all([
    startLocalDynamoDb('ack-escalation-channels'),
    startFeishuPlatform(),
    startFeishuPlatform({ secret: ONCALL_SECRET }),
  ]);
  dir = mkdtempSync(join(tmpdir(), 'escalation-channels-'));
  writeFileSync(join(dir, 'routing.yml'), ROUTING);
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await Promise.all([db, team, oncall].map((s) => s.close()));
});

async function start(delaySeconds = '0.2', more: { env?: Record<string, string>; metrics?: Metrics } = {}) {
  const tableName = 'escalation-channels';
  await ensureTable(db.client, tableName);
  const config = loadConfig({
    WEBHOOK_TOKEN,
    PUBLIC_URL,
    ACK_SECRET,
    TABLE_NAME: tableName,
    ROUTING_FILE: join(dir, 'routing.yml'),
    FEISHU_TEAM_URL: team.url,
    FEISHU_ONCALL_URL: oncall.url,
    FEISHU_ONCALL_SECRET: ONCALL_SECRET,
    ESCALATION_CHANNELS: 'oncall-feishu',
    ESCALATION_DELAY_SECONDS: delaySeconds,
    DELIVERY_RETRIES: '0',
    ...more.env,
  });
  return createApp(config, createDeps(config, { dynamodb: db.client, metrics: more.metrics }, silentLogger));
}

const auth = { authorization: `Bearer ${WEBHOOK_TOKEN}` };
const tokenOf = (text: string) => /\/v1\/ack\/([A-Za-z0-9_.-]+)/.exec(text)?.[1];
const titles = (p: FeishuPlatform) => p.accepted.map((a) => a.card.header.title.content);

describe('escalation to a routing-file channel instance (ESCALATION_CHANNELS)', () => {
  it('reaches the named instance once, with its own link; the acknowledgement follows it there', async () => {
    const app = await start();
    const post = (body: unknown) =>
      app.request('/v1/alertmanager', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...auth },
      });
    expect((await post(fixture('firing-kv-cache-critical'))).status).toBe(200);
    // The route's chat has the alert; the on-call chat nothing yet.
    expect(titles(team)).toEqual(['🔥 告警 · critical · VLLMKVCacheNearlyFull (1)']);
    expect(oncall.accepted).toHaveLength(0);
    const channels = async () =>
      ((await (await app.request(`/v1/alerts/${FP}`, { headers: auth })).json()) as { record: { channels: string[] } })
        .record.channels;
    await pollUntil(
      async () => ((await channels()).includes('oncall-feishu') ? true : undefined),
      () => `not escalated; the on-call chat got ${oncall.accepted.length}`,
      { deadlineMs: 15_000, intervalMs: 50 },
    );
    expect(titles(oncall)).toEqual([expect.stringMatching(/^🚨 无人认领/)]);
    const token = tokenOf(JSON.stringify(oncall.accepted[0]))!;
    expect(verifyAckToken(token, { current: new Secret(ACK_SECRET) }, Date.now())).toMatchObject({
      fingerprints: [FP],
      channel: 'oncall-feishu',
      locale: 'zh-CN',
    });

    const page = new FormClient(app);
    await page.open(`/v1/ack/${token}`);
    expect((await page.submit(`/v1/ack/${token}`, { name: 'lead' })).status).toBe(200);
    await pollUntil(
      async () => (oncall.accepted.length >= 2 ? true : undefined),
      () => `no acknowledgement follow-up in the on-call chat: ${titles(oncall).join(' | ')}`,
      { deadlineMs: 10_000, intervalMs: 50 },
    );
    expect(titles(oncall)[1]).toMatch(/^👀/);

    const resolved = fixture('firing-kv-cache-critical');
    resolved.status = 'resolved';
    resolved.alerts[0]!.status = 'resolved';
    resolved.alerts[0]!.endsAt = '2026-11-29T13:00:00Z';
    expect((await post(resolved)).status).toBe(200);
    // The resolve goes where the alert's routes send it, and to the instance the escalation reached.
    expect(titles(team)).toEqual([
      '🔥 告警 · critical · VLLMKVCacheNearlyFull (1)',
      '👀 已认领 · critical · VLLMKVCacheNearlyFull (1)',
      expect.stringMatching(/^✅ 已恢复/),
    ]);
    expect(titles(oncall)).toEqual([
      expect.stringMatching(/^🚨 无人认领/),
      expect.stringMatching(/^👀/),
      expect.stringMatching(/^✅ 已恢复/),
    ]);
    // Sent again (Alertmanager's repeat), the resolve is a duplicate everywhere.
    expect((await post(resolved)).status).toBe(200);
    expect([team.accepted.length, oncall.accepted.length]).toEqual([3, 3]);
  }, 60_000);

  it("a storm-sized resolve reaches the instance an escalated member's escalation reached (its record read apart)", async () => {
    const app = await start('600');
    const base = fixture('firing-kv-cache-critical');
    const alerts = Array.from({ length: MAX_TRACKED_FIRINGS + 5 }, (_, i) => ({
      ...base.alerts[0]!,
      labels: { ...base.alerts[0]!.labels, instance: `10.1.0.${i}:8000` },
      fingerprint: `5707e000000000${i.toString(16).padStart(2, '0')}`,
    }));
    const firing = { ...base, groupKey: '{}:{alertname="storm-resolve"}', alerts };
    const post = (body: unknown) =>
      app.request('/v1/alertmanager', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...auth },
      });
    expect((await post(firing)).status).toBe(200);
    // One member was escalated to the on-call chat (what the check records when it sends there).
    const escalated = alerts[7]!;
    const stores = alertStores(db.client, { tableName: 'escalation-channels', ttlSeconds: 3600 });
    await stores.records.addChannels(escalated.fingerprint, escalated.startsAt, ['oncall-feishu'], Date.now());
    const before = oncall.accepted.length;
    const endsAt = '2026-11-29T13:00:00Z';
    const resolved = {
      ...firing,
      status: 'resolved',
      alerts: alerts.map((a) => ({ ...a, status: 'resolved', endsAt })),
    };
    expect((await post(resolved)).status).toBe(200);
    const toOncall = oncall.accepted.slice(before);
    expect(toOncall).toHaveLength(1);
    expect(JSON.stringify(toOncall[0])).toContain('10.1.0.7:8000');
    expect(JSON.stringify(toOncall[0])).not.toContain('10.1.0.8:8000');
  }, 60_000);

  it('a target that fails while another accepts: escalated there, and counted failed (the delivery-failure alarm)', async () => {
    const robot = await startFeishuPlatform();
    const prom = prometheusMetrics();
    try {
      const app = await start('0.2', { env: { ESCALATION_FEISHU_WEBHOOK_URL: robot.url }, metrics: prom.metrics });
      const firing = fixture('firing-kv-cache-critical');
      firing.alerts[0]!.fingerprint = 'e5ca1a7ed0000003';
      firing.alerts[0]!.labels.instance = '127.0.0.1:9803';
      oncall.rateLimit(5);
      const res = await app.request('/v1/alertmanager', {
        method: 'POST',
        body: JSON.stringify(firing),
        headers: { 'content-type': 'application/json', ...auth },
      });
      expect(res.status).toBe(200);
      await pollUntil(
        async () => (robot.accepted.length ? true : undefined),
        () => 'not escalated to the robot target',
        { deadlineMs: 15_000, intervalMs: 50 },
      );
      await pollUntil(
        async () =>
          (await prom.scrape()).body.includes('channel="oncall-feishu",outcome="failed"') ? true : undefined,
        () => 'the failed target was not counted',
        { deadlineMs: 5_000, intervalMs: 50 },
      );
      const scraped = (await prom.scrape()).body;
      expect(scraped).toMatch(/notifications_total\{channel="oncall-feishu",outcome="failed",reason="\w+"\} 1/);
      expect(scraped).toMatch(/notifications_total\{channel="escalation-feishu",outcome="delivered",reason="ok"\} 1/);
    } finally {
      oncall.rateLimit(0);
      await robot.close();
    }
  }, 60_000);

  it('a resolve reaches only the instances the escalation reached: an alert never escalated, the routed chat only', async () => {
    // Not due before its resolve, however slow the machine: it never escalates.
    const app = await start('600');
    const firing = fixture('firing-kv-cache-critical');
    firing.alerts[0]!.fingerprint = 'e5ca1a7ed0000002';
    firing.alerts[0]!.labels.instance = '127.0.0.1:9801';
    const resolved = structuredClone(firing);
    resolved.status = 'resolved';
    resolved.alerts[0]!.status = 'resolved';
    resolved.alerts[0]!.endsAt = '2026-11-29T13:00:00Z';
    const before = [team.accepted.length, oncall.accepted.length];
    for (const body of [firing, resolved]) {
      const res = await app.request('/v1/alertmanager', {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...auth },
      });
      expect(res.status).toBe(200);
    }
    expect([team.accepted.length - before[0]!, oncall.accepted.length - before[1]!]).toEqual([2, 0]);
  }, 60_000);
});
