/**
 * Upgrading keeps a data folder working: the items an earlier version wrote (`test/fixtures/data-dir/
 * items-*.json`, recorded by `record.ts` with that version) are put into a `DATA_DIR` store, which is
 * then opened as `npm start` opens it and served by today's app. The clock runs from the recording's
 * end (only `Date` is faked: links are signed, and records expire). Whatever the store's item shapes
 * become, each recorded folder must still dedupe, acknowledge, escalate, thread and watch heartbeats.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchWriteItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../shared/runtime/config.js';
import { openDedupeTable, type DedupeTable } from '../../shared/runtime/local.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';
import {
  postWebhook,
  scenarioApp,
  scenarioSettings,
  watchdog,
  WEBHOOK_TOKEN,
  type RecordedFolder,
} from '../fixtures/data-dir/scenario.js';

const FIXTURES = new URL('../fixtures/data-dir/', import.meta.url);
const recordings = readdirSync(FIXTURES).filter((f) => /^items-.+\.json$/.test(f));
/** How long after the recording today's version starts, milliseconds: an upgrade's downtime. */
const DOWNTIME_MS = 5 * 60_000;

let dataDir: string;
let slack: FakeSlackApi;
let escalation: Loopback;
const opened: DedupeTable[] = [];

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'data-dir-upgrade-'));
  [slack, escalation] = await Promise.all([startFakeSlackApi(), startLoopback()]);
});

afterEach(async () => {
  vi.useRealTimers();
  await Promise.allSettled(opened.splice(0).map((t) => t.close()));
  await Promise.allSettled([slack.close(), escalation.close()]);
  await rm(dataDir, { recursive: true, force: true });
});

/** Opens `DATA_DIR` as `npm start` does, with the scenario's settings. */
async function open(env: Record<string, string>): Promise<DedupeTable> {
  const table = await openDedupeTable(loadConfig({ ...env, DATA_DIR: dataDir }), {});
  opened.push(table);
  return table;
}

/** Puts the recorded items into the folder's table, 25 to a request, then closes it (the folder as left on disk). */
async function restore(env: Record<string, string>, items: Record<string, AttributeValue>[]): Promise<void> {
  const table = await open(env);
  for (let i = 0; i < items.length; i += 25) {
    const requests = items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
    await table.client.send(new BatchWriteItemCommand({ RequestItems: { 'llm-alert-pipeline': requests } }));
  }
  await table.close();
  opened.pop();
}

describe.each(recordings)('a DATA_DIR written by %s, opened by this version', (file) => {
  const recorded = JSON.parse(readFileSync(new URL(file, FIXTURES), 'utf8')) as RecordedFolder;

  it('dedupes the repeat, acknowledges from an old link, keeps threads, escalations and heartbeats', async () => {
    const env = scenarioSettings({ slackApi: slack.url, escalation: escalation.url });
    await restore(env, recorded.items as Record<string, AttributeValue>[]);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(recorded.recordedAt) + DOWNTIME_MS });
    const table = await open(env);
    const { app, checkHeartbeats } = scenarioApp(env, table.client);
    const audit = async (fingerprint: string) =>
      (await (
        await app.request(`/v1/alerts/${fingerprint}`, { headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } })
      ).json()) as {
        record: { status: string; acknowledgement?: { by: string }; escalation?: { state: string; reason?: string } };
      };

    // Alertmanager's repeat of every group: nothing goes out again.
    for (const name of [
      'firing-queue-backlog-two-models',
      'firing-kv-cache-critical',
      'firing-gpu-memory-leak',
    ] as const)
      expect((await postWebhook(app, fixture(name))).status).toBe(200);
    expect(slack.calls()).toEqual([]);

    // The acknowledgement recorded before the upgrade stands; a link issued then still acknowledges.
    expect((await audit('ea8519d6e086bfe0')).record.acknowledgement?.by).toBe('alice');
    const path = recorded.ackPaths.VLLMQueueBacklog!;
    const page = await app.request(path);
    const html = await page.text();
    expect(page.status, html).toBe(200);
    const field = (n: string) => new RegExp(`name="${n}" value="([^"]*)"`).exec(html)?.[1] ?? '';
    const acked = await app.request(path, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: page.headers
          .getSetCookie()
          .map((c) => c.split(';')[0])
          .join('; '),
      },
      body: new URLSearchParams({ nonce: field('nonce'), mac: field('mac'), name: 'bob', action: 'ack' }).toString(),
    });
    expect(acked.status).toBe(200);
    expect((await audit('c10780c1bb3d6376')).record.acknowledgement?.by).toBe('bob');
    // The Slack app's message of that group is updated in place, its follow-up in its thread.
    const backlogTs = recorded.slackTs.VLLMQueueBacklog;
    expect(slack.calls().some((c) => c.method === 'chat.update' && c.form.ts === backlogTs)).toBe(true);
    expect(slack.calls().some((c) => c.method === 'chat.postMessage' && c.form.thread_ts === backlogTs)).toBe(true);

    // The escalation still scheduled is there; the resolve cancels it and reaches its thread.
    expect((await audit('936e109b8c52c001')).record.escalation?.state).toBe('scheduled');
    const resolved = fixture('firing-kv-cache-critical');
    resolved.status = 'resolved';
    resolved.alerts = resolved.alerts.map((a) => ({ ...a, status: 'resolved', endsAt: new Date().toISOString() }));
    expect((await postWebhook(app, resolved)).status).toBe(200);
    expect((await audit('936e109b8c52c001')).record).toMatchObject({
      status: 'resolved',
      escalation: { state: 'cancelled', reason: 'resolved' },
    });
    expect(slack.calls().some((c) => c.form.ts === recorded.slackTs.VLLMKVCacheNearlyFull)).toBe(true);
    expect(escalation.requests).toEqual([]);

    // The heartbeat seen before the upgrade counts: five minutes later it is not missing.
    expect(await checkHeartbeats()).toEqual({ 'http://alertmanager.example.com:9093': 'ok' });
    expect((await postWebhook(app, watchdog())).status).toBe(200);
  }, 60_000);
});
