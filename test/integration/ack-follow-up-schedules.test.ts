/**
 * Acknowledgement follow-ups in Lambda (no in-process timers): a follow-up Slack refuses with 429 for longer
 * than one request's budget is kept in the table and gets an EventBridge Scheduler one-time schedule at its
 * retry time, invoking this function with `{followUp: id}`. Running that event (`runFollowUp`, what the Lambda
 * entry does with it) delivers it once Slack takes it, schedules the next try on another 429, and gives it up
 * after `FOLLOW_UP_RETRY.maxAgeMs`, counted in `follow_ups_total` as under `npm start`. Through the real ack
 * runtime, the DynamoDB stores on dynalite and the Slack webhook channel against its loopback stand-in; the
 * Scheduler client records the `CreateSchedule` calls (their wire form is checked by test/infra), and the
 * test fires each schedule as Scheduler would, with the test clock at the schedule's time.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { acknowledge } from '../../shared/ack/acknowledge.js';
import { FOLLOW_UP_RETRY } from '../../shared/ack/follow-ups.js';
import { createSlackChannel } from '../../shared/channels/slack/index.js';
import { createLogger } from '../../shared/core/logger.js';
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
import { startSlackPlatform, type SlackPlatform } from './channels/platforms.js';

const FP = '936e109b8c52c001';
const FUNCTION_ARN = 'arn:aws:lambda:eu-west-1:123456789012:function:receiver';
const WIRING = {
  FOLLOW_UP_SCHEDULE_GROUP: 'follow-ups',
  FOLLOW_UP_ROLE_ARN: 'arn:aws:iam::123456789012:role/follow-up-scheduler',
  FOLLOW_UP_DEAD_LETTER_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:follow-up-dead-letters',
};
let db: LocalDynamoDb;
let slack: SlackPlatform;
let tables = 0;

beforeAll(async () => {
  [db, slack] = await Promise.all([startLocalDynamoDb('ack-follow-up-schedules'), startSlackPlatform()]);
});
afterAll(async () => Promise.all([db.close(), slack.close()]));
// What a test left of its 429s never reaches the next one.
beforeEach(() => slack.rateLimit(0, 0));

/** A `CreateSchedule` call as the Scheduler client was given it. */
interface Created {
  Name: string;
  GroupName: string;
  ScheduleExpression: string;
  Target: { Arn: string; RoleArn: string; Input: string };
}

interface World {
  runtime: AckRuntime;
  clock: TestClock;
  store: DynamoDbFollowUpStore;
  counted: string[];
  created: Created[];
  logged: Record<string, unknown>[];
}

/** The ack runtime as the Lambda wires it, on a fresh table, with the alert announced to Slack. */
async function announced(): Promise<World> {
  const tableName = `lambda-follow-ups-${++tables}`;
  await ensureTable(db.client, tableName);
  const config = loadConfig({
    TABLE_NAME: tableName,
    PUBLIC_URL: 'https://ack.example.com',
    ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
    ...WIRING,
  });
  // Not on a whole second: Scheduler's at() takes whole seconds, and a schedule must not fire before its try is due.
  const clock = testClock(Date.parse('2026-11-29T12:45:00.250Z'));
  const counted: string[] = [];
  const created: Created[] = [];
  const logged: Record<string, unknown>[] = [];
  const metrics = {
    inc: (name: CounterName, labels: Record<string, string>) =>
      void counted.push(`${name}{${Object.values(labels).join(',')}}`),
    observe() {},
    set() {},
  };
  const scheduler = {
    send: async (command: { input: Created }) => void created.push(command.input),
  } as unknown as Pick<SchedulerClient, 'send'>;
  const channels = [createSlackChannel({ webhookUrl: new Secret(slack.url), name: 'slack' })];
  const runtime = createAckRuntime(
    config,
    { dynamodb: db.client, metrics, scheduler, inProcessTimers: false, functionArn: () => FUNCTION_ARN },
    channels,
    { logger: createLogger('info', (l) => logged.push(JSON.parse(l))), now: clock.now },
  );
  const deps = testDeps({ table: { client: db.client, tableName }, alerts: runtime.tracker.stores, channels, clock });
  expect((await processGroup(fixture('firing-kv-cache-critical'), { ...deps, ack: runtime.tracker })).ok).toBe(true);
  const store = new DynamoDbFollowUpStore(db.client, { tableName });
  return { runtime, clock, store, counted, created, logged };
}

async function ack(w: World) {
  const issuedAt = Math.floor(w.clock.now() / 1000);
  const claims = { fingerprints: [FP], group: 'g', channel: 'slack', issuedAt, expiresAt: issuedAt + 3600 };
  return acknowledge(claims, { by: 'alice' }, { ...w.runtime.page!, sleep: w.clock.sleep });
}

/** Fires the schedule as Scheduler does: at its `at(...)` time (UTC), with its input as the function's event. */
async function fire(w: World, schedule: Created) {
  const at = Date.parse(`${/^at\((.+)\)$/.exec(schedule.ScheduleExpression)![1]}Z`);
  if (at > w.clock.now()) w.clock.advance(at - w.clock.now());
  const event = JSON.parse(schedule.Target.Input) as { followUp: string };
  return w.runtime.runFollowUp!(event.followUp);
}

const followUpCounts = (w: World) => w.counted.filter((c) => c.startsWith('follow_ups_total')).sort();

describe('follow-ups kept in Lambda, tried again by one-time schedules', () => {
  it('a 429 beyond the budget: kept, scheduled at Retry-After, delivered when the schedule fires', async () => {
    const w = await announced();
    slack.rateLimit(3, 30);
    const before = slack.accepted.length;
    expect((await ack(w)).followUps).toEqual({ slack: false });
    const [kept, ...others] = await w.store.list();
    expect(others).toEqual([]);
    expect(kept!.dueAtMs).toBe(w.clock.now() + 30_000);
    expect(w.created).toEqual([
      expect.objectContaining({
        Name: `fu-${kept!.id}-${Math.ceil(kept!.dueAtMs / 1000)}`,
        GroupName: 'follow-ups',
        ScheduleExpression: `at(${new Date(Math.ceil(kept!.dueAtMs / 1000) * 1000).toISOString().slice(0, 19)})`,
        Target: expect.objectContaining({
          Arn: FUNCTION_ARN,
          RoleArn: WIRING.FOLLOW_UP_ROLE_ARN,
          Input: JSON.stringify({ followUp: kept!.id }),
        }),
      }),
    ]);

    // Slack's window is over when the schedule fires.
    slack.rateLimit(0, 0);
    expect(await fire(w, w.created[0]!)).toBe('delivered');
    expect(await w.store.list()).toEqual([]);
    expect(JSON.stringify(slack.accepted.slice(before))).toContain('alice');
    expect(followUpCounts(w)).toEqual(['follow_ups_total{slack,delivered_on_retry}', 'follow_ups_total{slack,queued}']);
    // Its schedule was the last one: nothing more is scheduled.
    expect(w.created).toHaveLength(1);
  });

  it('another 429 when it fires: scheduled again under a name of its own; given up after the limit', async () => {
    const w = await announced();
    slack.rateLimit(1000, 600);
    await ack(w);
    const started = w.clock.now();
    const outcomes: string[] = [];
    for (let i = 0; i < 20 && outcomes.at(-1) !== 'given up'; i++) outcomes.push(await fire(w, w.created.at(-1)!));
    expect(outcomes.at(-1)).toBe('given up');
    expect(outcomes.slice(0, -1).every((o) => o === 'retry')).toBe(true);
    expect(new Set(w.created.map((c) => c.Name)).size).toBe(w.created.length);
    expect(w.created).toHaveLength(outcomes.length);
    expect(w.clock.now() - started).toBeLessThanOrEqual(FOLLOW_UP_RETRY.maxAgeMs);
    expect(await w.store.list()).toEqual([]);
    expect(followUpCounts(w)).toEqual(['follow_ups_total{slack,given_up}', 'follow_ups_total{slack,queued}']);
  });

  it('a schedule that fires for a follow-up already delivered (a duplicate) sends nothing', async () => {
    const w = await announced();
    slack.rateLimit(3, 30);
    await ack(w);
    slack.rateLimit(0, 0);
    const schedule = w.created[0]!;
    expect(await fire(w, schedule)).toBe('delivered');
    const sent = slack.accepted.length;
    expect(await fire(w, schedule)).toBe('not due');
    expect(slack.accepted).toHaveLength(sent);
  });

  it('a try that cannot reach the table is scheduled again after the lease, and says so', async () => {
    const w = await announced();
    slack.rateLimit(3, 30);
    await ack(w);
    const [kept] = await w.store.list();
    // The Lambda's wiring with its table unreachable (the SDK's retries off: one refused connection).
    const down = new DynamoDBClient({
      endpoint: 'http://127.0.0.1:9',
      region: 'eu-west-1',
      maxAttempts: 1,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    });
    const lost = createAckRuntime(
      loadConfig({ PUBLIC_URL: 'https://ack.example.com', ACK_SECRET: 'a'.repeat(32), ...WIRING }),
      {
        dynamodb: down,
        scheduler: { send: async (c: { input: Created }) => void w.created.push(c.input) } as never,
        inProcessTimers: false,
        functionArn: () => FUNCTION_ARN,
      },
      [],
      { logger: createLogger('error', (l) => w.logged.push(JSON.parse(l))), now: w.clock.now },
    );
    expect(await lost.runFollowUp!(kept!.id)).toBe('rescheduled');
    const again = w.created.at(-1)!;
    expect(JSON.parse(again.Target.Input)).toEqual({ followUp: kept!.id });
    expect(again.Name).toBe(`fu-${kept!.id}-${Math.ceil((w.clock.now() + FOLLOW_UP_RETRY.leaseMs) / 1000)}`);
    expect(w.logged.at(-1)).toMatchObject({ event: 'follow-up retry failed to run', id: kept!.id });
    down.destroy();
  });
});
