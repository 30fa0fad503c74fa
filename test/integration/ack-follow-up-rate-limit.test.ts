/**
 * Acknowledgement follow-ups against Slack and PagerDuty answering 429 with `Retry-After` for longer than
 * one request's 20 s budget: the follow-up is kept in the table and tried again after `Retry-After` until
 * it is delivered (the history's last follow-up event says delivered, and the thread and the incident
 * get their "acknowledged"), or until its limit passes (given up, said so in the history). Through the
 * real ack runtime (`createAckRuntime`), the DynamoDB stores on dynalite and the real Slack webhook and
 * PagerDuty channels against their loopback stand-ins; every wait is on the test clock, and the runs a
 * timer would start are started by the test once the clock reached their due time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acknowledge } from '../../shared/ack/acknowledge.js';
import { FOLLOW_UP_RETRY } from '../../shared/ack/follow-ups.js';
import { createPagerDutyChannel } from '../../shared/channels/pagerduty/index.js';
import { createSlackChannel } from '../../shared/channels/slack/index.js';
import { silentLogger } from '../../shared/core/logger.js';
import { Secret } from '../../shared/core/secret.js';
import type { CounterName } from '../../shared/metrics/catalogue.js';
import { processGroup } from '../../shared/pipeline/index.js';
import { createAckRuntime, type AckRuntime } from '../../shared/runtime/ack.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { DynamoDbFollowUpStore } from '../../shared/store/follow-ups.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { testClock, type TestClock } from '../helpers/clock.js';
import { fixture } from '../helpers/fixtures.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import {
  startPagerDutyPlatform,
  startSlackPlatform,
  type PagerDutyPlatform,
  type SlackPlatform,
} from './channels/platforms.js';

const FP = '936e109b8c52c001';
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
let db: LocalDynamoDb;
let slack: SlackPlatform;
let pd: PagerDutyPlatform;
let tables = 0;

beforeAll(async () => {
  [db, slack, pd] = await Promise.all([
    startLocalDynamoDb('ack-follow-up-rate-limit'),
    startSlackPlatform(),
    startPagerDutyPlatform(),
  ]);
});
afterAll(async () => Promise.all([db.close(), slack.close(), pd.close()]));

interface World {
  runtime: AckRuntime;
  clock: TestClock;
  store: DynamoDbFollowUpStore;
  counted: string[];
  tableName: string;
}

/** The ack runtime on a fresh table, with the alert announced to Slack and PagerDuty. */
async function announced(): Promise<World> {
  const tableName = `follow-ups-${++tables}`;
  await ensureTable(db.client, tableName);
  const config = loadConfig({
    TABLE_NAME: tableName,
    PUBLIC_URL: 'https://ack.example.com',
    ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
  });
  const clock = testClock();
  const counted: string[] = [];
  const metrics = {
    inc: (name: CounterName, labels: Record<string, string>) =>
      void counted.push(`${name}{${Object.values(labels).join(',')}}`),
    observe() {},
    set() {},
  };
  const channels = [
    createSlackChannel({ webhookUrl: new Secret(slack.url), name: 'slack' }),
    createPagerDutyChannel({ routingKey: new Secret(ROUTING_KEY), eventsUrl: pd.url }),
  ];
  const runtime = createAckRuntime(config, { dynamodb: db.client, metrics }, channels, {
    logger: silentLogger,
    now: clock.now,
  });
  const deps = testDeps({ table: { client: db.client, tableName }, alerts: runtime.tracker.stores, channels, clock });
  expect((await processGroup(fixture('firing-kv-cache-critical'), { ...deps, ack: runtime.tracker })).ok).toBe(true);
  return { runtime, clock, store: new DynamoDbFollowUpStore(db.client, { tableName }), counted, tableName };
}

async function ack(w: World) {
  const issuedAt = Math.floor(w.clock.now() / 1000);
  const claims = { fingerprints: [FP], group: 'g', channel: 'slack', issuedAt, expiresAt: issuedAt + 3600 };
  return acknowledge(claims, { by: 'alice' }, { ...w.runtime.page!, sleep: w.clock.sleep });
}

/** Runs, as the timers would, every kept follow-up once the clock reached its due time, until none is left. */
async function runKept(w: World, maxRuns: number): Promise<number> {
  let runs = 0;
  for (let kept = await w.store.list(); kept.length && runs < maxRuns; kept = await w.store.list()) {
    const next = Math.min(...kept.map((f) => f.dueAtMs));
    if (next > w.clock.now()) w.clock.advance(next - w.clock.now());
    for (const f of kept.filter((k) => k.dueAtMs <= w.clock.now())) {
      await w.runtime.page!.followUps!.run(f.id);
      runs++;
    }
  }
  return runs;
}

async function followUpEvents(w: World) {
  const history = await w.runtime.tracker.stores.history.last(FP, 50, w.clock.now());
  return history.filter((e) => e.type === 'follow-up');
}

describe('follow-ups while Slack and PagerDuty answer 429', () => {
  it('are kept and delivered after Retry-After, beyond the request’s budget', async () => {
    const w = await announced();
    // Four 429s, each asking for 30 s: longer than one request's budget (20 s), so no try fits in it.
    slack.rateLimit(4, 30);
    pd.fail(4, 429, 30);
    const slackBefore = slack.accepted.length;
    const result = await ack(w);
    expect(result.followUps).toEqual({ slack: false, pagerduty: false });
    expect((await followUpEvents(w)).at(-1)).toMatchObject({
      channels: [],
      failed: [],
      retrying: ['pagerduty', 'slack'],
    });
    expect(w.runtime.followUpTimers!.pending()).toHaveLength(2);
    const kept = await w.store.list();
    // Retry-After (30 s) from the last 429, not the backoff.
    for (const f of kept) expect(f.dueAtMs).toBe(w.clock.now() + 30_000);

    expect(await runKept(w, 10)).toBeGreaterThanOrEqual(2);
    expect(await w.store.list()).toEqual([]);
    const events = await followUpEvents(w);
    expect(
      events
        .slice(-2)
        .map((e) => e.channels[0])
        .sort(),
    ).toEqual(['pagerduty', 'slack']);
    // Five tries each, every one after the Retry-After of the one before: four met a 429, the fifth delivered.
    // None was spent inside a window the platform had asked us to wait out.
    for (const e of events.slice(-2)) expect(e).toMatchObject({ failed: [], attempts: 5 });
    expect(JSON.stringify(slack.accepted.slice(slackBefore))).toContain('alice');
    expect(pd.accepted.at(-1)).toMatchObject({ event_action: 'acknowledge' });
    expect(w.counted.filter((c) => c.startsWith('follow_ups_total')).sort()).toEqual([
      'follow_ups_total{pagerduty,delivered_on_retry}',
      'follow_ups_total{pagerduty,queued}',
      'follow_ups_total{slack,delivered_on_retry}',
      'follow_ups_total{slack,queued}',
    ]);
    w.runtime.followUpTimers!.close();
  });

  it('are given up once the limit passes, and the history says so', async () => {
    const w = await announced();
    pd.fail(1000, 429, 600);
    await ack(w);
    const started = w.clock.now();
    await runKept(w, 50);
    pd.clear();
    expect(await w.store.list()).toEqual([]);
    expect(w.clock.now() - started).toBeLessThanOrEqual(FOLLOW_UP_RETRY.maxAgeMs);
    const last = (await followUpEvents(w)).at(-1);
    expect(last).toMatchObject({ channels: [], failed: ['pagerduty'] });
    expect(w.counted).toContain('follow_ups_total{pagerduty,given_up}');
    // Slack took it at once.
    expect(w.counted).toContain('follow_ups_total{slack,delivered}');
    w.runtime.followUpTimers!.close();
  });

  it('are dropped when their alerts fired again as a later occurrence meanwhile', async () => {
    const w = await announced();
    pd.fail(4, 429, 30);
    await ack(w);
    pd.clear();
    expect(await w.store.list()).toHaveLength(1);
    // The alert resolved and fired again: a new occurrence, with messages of its own.
    const again = fixture('firing-kv-cache-critical');
    again.alerts[0]!.startsAt = new Date(w.clock.now()).toISOString();
    const deps = testDeps({
      table: { client: db.client, tableName: w.tableName },
      alerts: w.runtime.tracker.stores,
      channels: w.runtime.page!.channels,
      clock: w.clock,
    });
    expect((await processGroup(again, { ...deps, ack: w.runtime.tracker })).ok).toBe(true);
    const acknowledgedBefore = pd.accepted.filter((e) => e.event_action === 'acknowledge').length;
    await runKept(w, 5);
    expect(await w.store.list()).toEqual([]);
    expect(pd.accepted.filter((e) => e.event_action === 'acknowledge')).toHaveLength(acknowledgedBefore);
    expect(w.counted).toContain('follow_ups_total{pagerduty,given_up}');
    w.runtime.followUpTimers!.close();
  });
});
