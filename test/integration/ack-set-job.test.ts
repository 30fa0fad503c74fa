/**
 * "Acknowledge all N" of a storm digest in the Slack app, as deployed in Lambda: the click is answered
 * after one conditional write and one asynchronous invocation of the function, whatever the set's
 * size (Slack's deadline is 3 s; the set itself is acknowledged after the answer, in steps, each its
 * own invocation and bounded); a second click changes nothing. Real app (`loadConfig` → `createDeps` →
 * `createApp`) on dynalite, the Slack Web API on loopback, Lambda's Invoke API recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InvokeCommand } from '@aws-sdk/client-lambda';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { silentLogger } from '../../shared/core/logger.js';
import { createDeps, type RuntimeDeps } from '../../shared/runtime/deps.js';
import { runSetStep } from '../../shared/ack/set-job.js';
import { isAckSetStep } from '../../shared/ack/set-step-event.js';
import { countCommands } from '../helpers/count-commands.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';
import {
  acknowledgeToken,
  clickBody,
  postClick,
  postWebhook,
  slackAppSettings,
  WEBHOOK_TOKEN,
} from '../helpers/slack-app.js';
import { stormWebhook } from './storm-webhook.js';

const ALERTS = 300;

let db: LocalDynamoDb;
let slack: FakeSlackApi;
let app: ReturnType<typeof createApp>;
let deps: RuntimeDeps;
let counts: Map<string, number>;
/** Lambda's asynchronous invocations the app asked for, not yet run. */
const invocations: { FunctionName?: string; InvocationType?: string; Payload?: unknown }[] = [];
const storm = stormWebhook(ALERTS);

beforeAll(async () => {
  db = await startLocalDynamoDb('ack-set-job');
  slack = await startFakeSlackApi();
  const config = loadConfig({
    ...slackAppSettings(db.tableName, slack.url, 'xoxb-1111-2222-STORMtokenXYZ'),
    DELIVERY_RETRIES: '0',
  });
  const lambda = {
    send: async (command: InvokeCommand) => {
      invocations.push(command.input);
      return {};
    },
  } as never;
  deps = createDeps(
    config,
    { dynamodb: db.client, ackSetSteps: { functionName: () => 'receiver', lambda } },
    silentLogger,
  );
  app = createApp(config, deps);
  counts = countCommands(db.client);
  expect((await postWebhook(app, storm)).status).toBe(200);
}, 120_000);
afterAll(async () => {
  await slack.close();
  await db.close();
});

/** Clicks the digest's Acknowledge button as `user`. */
async function click(user: string): Promise<Response> {
  const digest = slack.calls().find((c) => c.method === 'chat.postMessage')!;
  return postClick(app, clickBody(acknowledgeToken(digest), user));
}

const requests = () => [...counts.values()].reduce((a, b) => a + b, 0);

async function acknowledgedBy(): Promise<(string | undefined)[]> {
  return Promise.all(
    storm.alerts.map(async (a) => {
      const audit = (await (
        await app.request(`/v1/alerts/${a.fingerprint}`, { headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` } })
      ).json()) as { record?: { acknowledgement?: { by: string } }; history?: { type: string }[] };
      return audit.record?.acknowledgement?.by;
    }),
  );
}

/** Runs the recorded invocations as Lambda would (each step dispatches the next); returns the steps' outcomes. */
async function runInvocations(stepAlerts: number): Promise<{ acked: number; requests: number }[]> {
  const steps: { acked: number; requests: number }[] = [];
  const setJobs = deps.ackPage!.setJobs!;
  while (invocations.length) {
    const event = JSON.parse(new TextDecoder().decode(invocations.shift()!.Payload as Uint8Array)) as unknown;
    expect(isAckSetStep(event)).toBe(true);
    const id = (event as { ackSetStep: string }).ackSetStep;
    const before = (await setJobs.jobs.get(id))!.acked;
    counts.clear();
    const stepDeps = { ...setJobs.deps(), stepAlerts };
    const next = await runSetStep(id, stepDeps);
    const stepRequests = requests();
    steps.push({ acked: (await setJobs.jobs.get(id))!.acked - before, requests: stepRequests });
    if (next === 'more') await stepDeps.dispatch(id);
  }
  return steps;
}

describe('Slack app: "Acknowledge all" of a storm answers first, acknowledges after', () => {
  it('answers after one conditional write and one asynchronous invocation, having acknowledged nothing yet', async () => {
    counts.clear();
    const res = await click('bob');
    expect(res.status).toBe(200);
    // The work before the answer, whatever the set's size: the decision, and the invocation that carries on.
    expect(Object.fromEntries(counts)).toEqual({ PutItem: 1 });
    expect(invocations).toHaveLength(1);
    expect(invocations[0]).toMatchObject({ FunctionName: 'receiver', InvocationType: 'Event' });
    expect((await acknowledgedBy()).filter(Boolean)).toHaveLength(0);
  }, 60_000);

  it('a second click, by anyone, changes nothing and starts nothing', async () => {
    counts.clear();
    expect((await click('carol')).status).toBe(200);
    expect(Object.fromEntries(counts)).toEqual({ PutItem: 1, GetItem: 1 });
    expect(invocations).toHaveLength(1);
  }, 60_000);

  it('acknowledges the set in bounded steps, each its own invocation, all as the first clicker', async () => {
    const steps = await runInvocations(120);
    // 300 alerts, 120 a step: three steps that acknowledge (the job's cursor), then one that finds nothing paced left.
    expect(steps.map((s) => s.acked)).toEqual([120, 120, 60, 0]);
    // Each step's requests are bounded by its alerts, not the set's size (~6 an alert, see acknowledge.ts).
    for (const s of steps) expect(s.requests).toBeLessThanOrEqual(120 * 8 + 10);
    expect((await acknowledgedBy()).filter((by) => by === 'bob')).toHaveLength(ALERTS);
    // A later click still finds the decision: nothing re-acknowledged, nothing dispatched.
    expect((await click('dave')).status).toBe(200);
    expect(invocations).toHaveLength(0);
    const audit = (await (
      await app.request(`/v1/alerts/${storm.alerts[0]!.fingerprint}`, {
        headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` },
      })
    ).json()) as { history: { type: string }[] };
    expect(audit.history.filter((e) => e.type === 'acknowledged')).toHaveLength(1);
  }, 180_000);
});
