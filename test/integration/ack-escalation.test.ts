/**
 * Escalation of unacknowledged critical alerts: through the in-process timer to a real Slack channel
 * instance on loopback; not when acknowledged or resolved first (the schedule is dropped and the check,
 * run as the schedule would, skips); and the EventBridge Scheduler wire requests (loopback stand-in,
 * the real SDK). Waits are bounded polls.
 */
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { checkEscalation } from '../../shared/escalation/escalation.js';
import {
  atExpression,
  EventBridgeScheduler,
  OneTimeSchedules,
  scheduleName,
} from '../../shared/escalation/eventbridge-scheduler.js';
import { verifyAckToken } from '../../shared/ack/token.js';
import { MAX_ESCALATIONS_PER_MESSAGE } from '../../shared/ack/tracker.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { Secret } from '../../shared/core/secret.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { pollUntil } from '../helpers/processes.js';
import { ACK_SECRET, ackHarness, ackPath, FormClient, type AckHarness } from './ack-harness.js';

const FP = '936e109b8c52c001';
const JOB = { fingerprint: FP, startsAt: '2026-11-29T12:42:23.143Z' };
let db: LocalDynamoDb;
let target: Loopback;

beforeAll(async () => {
  db = await startLocalDynamoDb('ack-escalation-0');
});
afterAll(async () => db.close());
afterEach(async () => target?.close());

async function harness(delaySeconds: string): Promise<AckHarness> {
  target = await startLoopback();
  return ackHarness(db, {
    ESCALATION_SLACK_WEBHOOK_URL: `${target.url}/services/T0/B0/escalation`,
    ESCALATION_DELAY_SECONDS: delaySeconds,
  });
}

const bodies = () =>
  target.requests.map(
    (r) =>
      JSON.parse(r.body.toString('utf8')) as {
        text: string;
        blocks: { type: string; text?: { text: string }; elements?: { url?: string }[] }[];
      },
  );
const historyTypes = async (h: AckHarness) =>
  ((await (await h.audit(FP)).json()) as { history: { type: string; reason?: string }[] }).history.map((e) =>
    e.reason ? `${e.type}:${e.reason}` : e.type,
  );

function resolvedFixture() {
  const body = fixture('firing-kv-cache-critical');
  body.status = 'resolved';
  body.alerts[0]!.status = 'resolved';
  body.alerts[0]!.endsAt = '2026-11-29T13:00:00Z';
  return body;
}

describe('escalation through the in-process timer', () => {
  it('escalates an unacknowledged critical alert once, with its own link, and the target gets the ack follow-up', async () => {
    const h = await harness('0.2');
    await h.webhook(fixture('firing-kv-cache-critical'));
    const carried = async () =>
      ((await (await h.audit(FP)).json()) as { record: { channels: string[] } }).record.channels;
    await pollUntil(
      async () => ((await carried()).includes('escalation-slack') ? true : undefined),
      () => `not escalated; target got ${target.requests.length}`,
      { deadlineMs: 15_000, intervalMs: 50 },
    );
    const [message] = bodies();
    expect(message!.blocks[0]!.text!.text).toBe('🚨 UNACKNOWLEDGED · critical · VLLMKVCacheNearlyFull (1)');
    const url = message!.blocks.find((b) => b.type === 'actions')!.elements![0]!.url!;
    const token = url.split('/').pop()!;
    expect(verifyAckToken(token, { current: new Secret(ACK_SECRET) }, h.now())).toMatchObject({
      fingerprints: [FP],
      channel: 'escalation-slack',
    });
    expect(await checkEscalation(JOB, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(1);
    expect(await historyTypes(h)).toEqual(['notified', 'escalation scheduled', 'escalated']);

    const client = new FormClient(h.app);
    await client.open(new URL(url).pathname);
    await client.submit(new URL(url).pathname, { name: 'lead' });
    expect(target.requests).toHaveLength(2);
    expect(bodies()[1]!.blocks[0]!.text!.text).toMatch(/^👀 ACKNOWLEDGED/);
    expect(h.channels.map((c) => c.received.length)).toEqual([2, 2]);
  });

  it('does not escalate an alert acknowledged in time', async () => {
    const h = await harness('3600');
    await h.webhook(fixture('firing-kv-cache-critical'));
    expect(h.runtime.timers!.pending()).toEqual([`${FP}@${JOB.startsAt}`]);
    const client = new FormClient(h.app);
    const path = ackPath(h.channels[0]!.received[0]);
    await client.open(path);
    await client.submit(path, { name: 'alice' });
    expect(h.runtime.timers!.pending()).toEqual([]);
    // As if the schedule had fired anyway (a cancel lost in AWS): the check re-reads the state.
    expect(await checkEscalation(JOB, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
    expect(await historyTypes(h)).toEqual([
      'notified',
      'escalation scheduled',
      'acknowledged',
      'escalation cancelled:acknowledged',
      'follow-up',
    ]);
  });

  it('does not escalate an alert resolved in time', async () => {
    const h = await harness('3600');
    await h.webhook(fixture('firing-kv-cache-critical'));
    await h.webhook(resolvedFixture());
    expect(h.runtime.timers!.pending()).toEqual([]);
    expect(await checkEscalation(JOB, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
    expect(await historyTypes(h)).toEqual([
      'notified',
      'escalation scheduled',
      'notified',
      'escalation cancelled:resolved',
    ]);
  });

  it('schedules the escalation of a critical alert that every channel failed to deliver (the target is the way out)', async () => {
    const h = await harness('3600');
    for (const c of h.channels) c.down = true;
    expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(502);
    expect(h.runtime.timers!.pending()).toEqual([`${FP}@${JOB.startsAt}`]);
    expect(await historyTypes(h)).toEqual(['not delivered', 'escalation scheduled']);
    // Alertmanager's retry delivers once the platforms are back; the escalation stays as it was.
    for (const c of h.channels) c.down = false;
    expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(200);
    expect(h.runtime.timers!.pending()).toEqual([`${FP}@${JOB.startsAt}`]);
    expect(await historyTypes(h)).toEqual(['not delivered', 'escalation scheduled', 'notified']);
  });

  it('a channel that took the message but answered too late is named in the history as may have been delivered', async () => {
    const h = await harness('3600');
    const [slow, ...others] = h.channels;
    slow!.slow = true;
    expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(502);
    expect(slow!.received).toHaveLength(1);
    const history = ((await (await h.audit(FP)).json()) as { history: Record<string, unknown>[] }).history;
    expect(history[0]).toMatchObject({
      type: 'notified',
      channels: others.map((c) => c.name).sort(),
      mayHaveBeenDelivered: [slow!.name],
    });
  });

  it('cancels the escalation on a resolve that every channel failed to deliver (the alert is resolved all the same)', async () => {
    const h = await harness('3600');
    await h.webhook(fixture('firing-kv-cache-critical'));
    for (const c of h.channels) c.down = true;
    expect((await h.webhook(resolvedFixture())).status).toBe(502);
    expect(h.runtime.timers!.pending()).toEqual([]);
    expect(await checkEscalation(JOB, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
    expect(await historyTypes(h)).toEqual([
      'notified',
      'escalation scheduled',
      'not delivered',
      'escalation cancelled:resolved',
    ]);
  });

  it('escalates a re-fire after an acknowledged resolve again: the acknowledgement belonged to the earlier firing', async () => {
    const h = await harness('3600');
    await h.webhook(fixture('firing-kv-cache-critical'));
    const client = new FormClient(h.app);
    const path = ackPath(h.channels[0]!.received[0]);
    await client.open(path);
    await client.submit(path, { name: 'alice' });
    await h.webhook(resolvedFixture());
    expect(h.runtime.timers!.pending()).toEqual([]);
    // Two minutes later Alertmanager sends it firing again with the same startsAt (a missed resend resolved it): generation 1.
    h.advance(120_000);
    expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(200);
    expect(h.runtime.timers!.pending()).toEqual([`${FP}@${JOB.startsAt}`]);
    const record = (await (await h.audit(FP)).json()) as { record: { acknowledgement?: unknown; status: string } };
    expect(record.record).toMatchObject({ status: 'firing' });
    expect(record.record.acknowledgement).toBeUndefined();
    // The first firing's link (same fingerprint and startsAt) does not acknowledge the re-fire.
    const stale = new FormClient(h.app);
    await stale.open(path);
    await stale.submit(path, { name: 'bob' });
    expect(h.runtime.timers!.pending()).toEqual([`${FP}@${JOB.startsAt}`]);
    expect(
      ((await (await h.audit(FP)).json()) as { record: { acknowledgement?: unknown } }).record.acknowledgement,
    ).toBeUndefined();
  });

  it('never schedules a warning', async () => {
    const h = await harness('0.2');
    await h.webhook(fixture('firing-queue-backlog-two-models'));
    expect(h.runtime.timers!.pending()).toEqual([]);
    const record = (await (await h.audit('c10780c1bb3d6376')).json()) as { record: { escalation?: unknown } };
    expect(record.record.escalation).toBeUndefined();
  });

  it.each(['Critical', 'CRITICAL', 'page', 'P1'])(
    'schedules the escalation of severity %j as of `critical`',
    async (severity) => {
      const h = await harness('3600');
      const body = fixture('firing-kv-cache-critical');
      body.alerts[0]!.labels.severity = severity;
      body.commonLabels.severity = severity;
      await h.webhook(body);
      expect(h.runtime.timers!.pending()).toHaveLength(1);
      const record = (await (await h.audit(body.alerts[0]!.fingerprint)).json()) as {
        record: { escalation?: unknown };
      };
      expect(record.record.escalation).toMatchObject({ state: 'scheduled' });
    },
  );

  it('schedules at most MAX_ESCALATIONS_PER_MESSAGE escalations for one message (a storm)', async () => {
    const h = await harness('3600');
    const body = fixture('firing-kv-cache-critical');
    const template = body.alerts[0]!;
    body.alerts = Array.from({ length: MAX_ESCALATIONS_PER_MESSAGE + 5 }, (_, i) => ({
      ...template,
      fingerprint: `f${i}`,
      labels: { ...template.labels, model_name: `m${i}` },
    }));
    expect((await h.webhook(body)).status).toBe(200);
    expect(h.runtime.timers!.pending()).toHaveLength(MAX_ESCALATIONS_PER_MESSAGE);
  });

  it('hands the claim back when the target fails, so the retry sends', async () => {
    const h = await harness('3600');
    target.reply({ status: 404, body: 'no_service' });
    await h.webhook(fixture('firing-kv-cache-critical'));
    h.runtime.timers!.close();
    await expect(checkEscalation(JOB, h.runtime.escalation!)).rejects.toThrow(/escalation-slack: HTTP 404: no_service/);
    expect(await checkEscalation(JOB, h.runtime.escalation!)).toBe('escalated');
    expect(target.requests).toHaveLength(2);
    expect(await historyTypes(h)).toEqual(['notified', 'escalation scheduled', 'escalation failed', 'escalated']);
  });
});

describe('EventBridge Scheduler', () => {
  const settings = {
    groupName: 'llm-alert-escalations',
    functionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:check',
    roleArn: 'arn:aws:iam::123456789012:role/scheduler',
  };
  const client = (url: string) =>
    new SchedulerClient({
      region: 'eu-west-1',
      endpoint: url,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
  /** The runtime as the stack configures it: Scheduler settings set, Scheduler and the escalation Slack both at `url`. */
  const scheduledHarness = (url: string) =>
    ackHarness(
      db,
      {
        ESCALATION_SLACK_WEBHOOK_URL: `${url}/services/T0/B0/escalation`,
        ESCALATION_SCHEDULE_GROUP: settings.groupName,
        ESCALATION_FUNCTION_ARN: settings.functionArn,
        ESCALATION_ROLE_ARN: settings.roleArn,
      },
      { scheduler: client(url) },
    );

  it('creates one one-time schedule per occurrence and deletes it, tolerating "exists" and "gone"', async () => {
    target = await startLoopback({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"ScheduleArn":"arn:aws:scheduler:eu-west-1:123456789012:schedule/g/n"}',
    });
    const scheduler = new EventBridgeScheduler(new OneTimeSchedules(client(target.url), settings));
    const due = Date.parse('2026-11-29T12:57:23.900Z');
    await scheduler.schedule(JOB, due);
    const conflict = {
      status: 409,
      headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'ConflictException' },
      body: '{"Message":"exists"}',
    };
    target.reply(conflict);
    await scheduler.schedule(JOB, due);
    target.reply({
      status: 404,
      headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' },
      body: '{"Message":"gone"}',
    });
    await scheduler.cancel(JOB);
    target.reply({
      ...conflict,
      status: 400,
      headers: { ...conflict.headers, 'x-amzn-errortype': 'ValidationException' },
    });
    await expect(scheduler.schedule(JOB, due)).rejects.toThrow();

    const [create] = target.requests;
    expect(scheduleName(JOB)).toBe('esc-936e109b8c52c001-1795956143');
    expect(create!.method).toBe('POST');
    expect(create!.path).toBe('/schedules/esc-936e109b8c52c001-1795956143');
    expect(JSON.parse(create!.body.toString('utf8'))).toEqual({
      GroupName: 'llm-alert-escalations',
      ScheduleExpression: 'at(2026-11-29T12:57:23)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: {
        Arn: settings.functionArn,
        RoleArn: settings.roleArn,
        Input: JSON.stringify(JOB),
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 10 },
      },
      Description: `llm-alert-pipeline escalation check for alert ${FP}`,
      ClientToken: expect.any(String),
    });
    expect(target.requests[2]!.method).toBe('DELETE');
    const remove = new URL(target.requests[2]!.path, target.url);
    expect(remove.pathname).toBe('/schedules/esc-936e109b8c52c001-1795956143');
    expect(remove.searchParams.get('groupName')).toBe('llm-alert-escalations');
    expect(atExpression(due)).toBe('at(2026-11-29T12:57:23)');
  });

  it("names the dead-letter queue in the schedule's target when the stack sets one", async () => {
    target = await startLoopback({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' });
    const deadLetterQueueArn = 'arn:aws:sqs:eu-west-1:123456789012:escalation-dead-letters';
    await new EventBridgeScheduler(
      new OneTimeSchedules(client(target.url), { ...settings, deadLetterQueueArn }),
    ).schedule(JOB, Date.parse('2026-11-29T12:57:23Z'));
    expect(JSON.parse(target.requests[0]!.body.toString('utf8')).Target).toEqual({
      Arn: settings.functionArn,
      RoleArn: settings.roleArn,
      Input: JSON.stringify(JOB),
      RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 10 },
      DeadLetterConfig: { Arn: deadLetterQueueArn },
    });
  });

  it('records an escalation whose schedule could not be created as not scheduled, after retrying', async () => {
    const denied = {
      status: 403,
      headers: { 'content-type': 'application/json', 'x-amzn-errortype': 'AccessDeniedException' },
      body: '{"Message":"not authorized"}',
    };
    target = await startLoopback(denied);
    const h = await scheduledHarness(target.url);
    expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(200);
    expect(target.requests.filter((r) => r.method === 'POST')).toHaveLength(3);
    const { record } = (await (await h.audit(FP)).json()) as { record: { escalation?: unknown } };
    expect(record.escalation).toBeUndefined();
    expect(await historyTypes(h)).toEqual(['notified', 'escalation not scheduled']);
  });

  it('is what the runtime uses when the stack sets the scheduler settings', async () => {
    target = await startLoopback({ status: 200, headers: { 'content-type': 'application/json' }, body: '{}' });
    const h = await scheduledHarness(target.url);
    expect(h.runtime.timers).toBeUndefined();
    await h.webhook(fixture('firing-kv-cache-critical'));
    await h.webhook(resolvedFixture());
    expect(target.requests.map((r) => `${r.method} ${r.path.split('?')[0]}`)).toEqual([
      'POST /schedules/esc-936e109b8c52c001-1795956143',
      'DELETE /schedules/esc-936e109b8c52c001-1795956143',
    ]);
  });
});
