/**
 * Escalation as deployed (the escalation variant: `-c escalationDelaySeconds=900 -c publicUrl=…`): the
 * receiver's asset schedules the check through EventBridge Scheduler (a stand-in recording
 * `CreateSchedule`), and the escalation function's own asset is invoked the way Scheduler invokes it —
 * asynchronously, with the schedule's `Input` as the event — against the same table. Unacknowledged, it
 * publishes to the escalation topic; resolved first, the receiver deletes the schedule and a check that
 * fires anyway skips; an event that is not a job throws (so
 * Lambda retries it and the failed-checks queue keeps it), never a quiet success. With the settings
 * `-c ampWorkspaceArn` gives the check (the workspace's alert manager, SigV4), it asks a loopback stand-in
 * at the same path, signed as its role session, and does not escalate an alert silenced there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionUrlEvent } from '../../scripts/lambda-local.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import type { WebhookMessage } from '../../shared/alertmanager/schema.js';
import { fixture } from '../helpers/fixtures.js';
import { startSnsPlatform, type SnsPlatform } from '../integration/channels/platforms.js';
import {
  startScheduler,
  startSecretsManager,
  type SchedulerStandIn,
  type SecretsManagerStandIn,
} from './assembly/aws-stand-ins.js';
import { chunkCoverage } from './assembly/chunks.js';
import { expectClaimedChunksRan } from './assembly/claims.js';
import { deployed, deployedFunction } from './assembly/deployed.js';
import { invokeDeployed, templateEnvironment } from './assembly/invoke.js';
import { startLoopback } from '../helpers/loopback.js';
import { expectSigV4 } from '../helpers/sigv4.js';

const TOKEN = 'deployed-escalation-token-0123456789abcdef';
const ACK_SECRET = 'deployed-escalation-ack-secret-0123456789abcdef';

describe('escalation, from the receiver to the escalation function, as deployed', () => {
  const { template } = deployed('escalation');
  const receiver = deployedFunction('escalation', 'Receiver/Function');
  const check = deployedFunction('escalation', 'Escalation/Function');
  const receiverEnv = templateEnvironment(receiver, template.Resources);
  const checkEnv = templateEnvironment(check, template.Resources);
  const coverage = chunkCoverage(receiver);
  const checkCoverage = chunkCoverage(check);
  let db: LocalDynamoDb;
  let secrets: SecretsManagerStandIn;
  let scheduler: SchedulerStandIn;
  let sns: SnsPlatform;

  beforeAll(async () => {
    [db, sns, scheduler] = await Promise.all([
      startLocalDynamoDb(receiverEnv.TABLE_NAME!),
      startSnsPlatform(),
      startScheduler(),
    ]);
    secrets = await startSecretsManager({ [receiverEnv.SETTINGS_SECRET_ARN!]: { WEBHOOK_TOKEN: TOKEN, ACK_SECRET } });
  });
  afterAll(async () => {
    await Promise.allSettled([db, secrets, scheduler, sns].map((s) => s?.close()));
  });

  const endpoints = () => ({
    dynamodb: db.endpoint,
    sns: sns.endpoint,
    secretsManager: secrets.endpoint,
    scheduler: scheduler.endpoint,
  });
  const receive = (...messages: WebhookMessage[]) =>
    invokeDeployed(
      receiver,
      messages.map((m) => functionUrlEvent(JSON.stringify(m), { authorization: `Bearer ${TOKEN}` })),
      { endpoints: endpoints(), env: { NODE_V8_COVERAGE: coverage.dir } },
    );
  /** Scheduler's invocation: the target's `Input`, parsed, is the event (asynchronous, so a throw is a retry). */
  const fire = (input: string | undefined) =>
    invokeDeployed(check, [JSON.parse(input ?? 'null')], {
      endpoints: endpoints(),
      contexts: [{ awsRequestId: 'sch-1' }],
    });

  it('the template wires the check: its own environment, the receiver scheduling it', () => {
    expect(checkEnv.ESCALATION_SNS_TOPIC_ARN).toBe(receiverEnv.ESCALATION_SNS_TOPIC_ARN);
    expect(checkEnv.TABLE_NAME).toBe(receiverEnv.TABLE_NAME);
    expect(receiverEnv.ESCALATION_FUNCTION_ARN).toMatch(new RegExp(`:function:${check.logicalId}$`));
  });

  it('a critical alert is scheduled with its job as input; the check escalates it to the escalation topic', async () => {
    const { results } = await receive(fixture('firing-kv-cache-critical'));
    expect(results[0]).toMatchObject({ statusCode: 200 });
    const alert = fixture('firing-kv-cache-critical').alerts[0]!;
    const [schedule, ...others] = [...scheduler.schedules.values()];
    expect(others).toEqual([]);
    expect(schedule).toMatchObject({
      groupName: receiverEnv.ESCALATION_SCHEDULE_GROUP,
      scheduleExpression: expect.stringMatching(/^at\(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\)$/),
      actionAfterCompletion: 'DELETE',
      target: {
        Arn: receiverEnv.ESCALATION_FUNCTION_ARN,
        RoleArn: receiverEnv.ESCALATION_ROLE_ARN,
        DeadLetterConfig: { Arn: receiverEnv.ESCALATION_DEAD_LETTER_QUEUE_ARN },
      },
    });
    expect(JSON.parse(schedule!.target.Input!)).toEqual({ fingerprint: alert.fingerprint, startsAt: alert.startsAt });

    const published = sns.delivered.length;
    const { results: outcome } = await fire(schedule!.target.Input);
    expect(outcome).toEqual([{ outcome: 'escalated' }]);
    const escalations = sns.delivered.slice(published);
    expect(escalations.map((p) => p.TopicArn)).toEqual([checkEnv.ESCALATION_SNS_TOPIC_ARN]);
    expect(escalations[0]!.Message).toContain('KV cache');
  }, 90_000);

  it('resolved before it is due: the schedule is deleted, and a check that fires anyway sends nothing', async () => {
    const firing = fixture('firing-kv-cache-critical');
    firing.groupKey = '{}:{alertname="resolved-early"}';
    firing.alerts[0]!.fingerprint = 'e5ca1a7ed0000001';
    const resolved = structuredClone(firing);
    resolved.status = 'resolved';
    resolved.alerts[0]!.status = 'resolved';
    resolved.alerts[0]!.endsAt = new Date().toISOString();
    const { results } = await receive(firing);
    expect(results[0]).toMatchObject({ statusCode: 200 });
    const key = [...scheduler.schedules.keys()].find((k) => k.includes('e5ca1a7ed0000001'))!;
    const input = scheduler.schedules.get(key)!.target.Input;
    expect((await receive(resolved)).results[0]).toMatchObject({ statusCode: 200 });
    expect(scheduler.schedules.has(key)).toBe(false);
    const published = sns.delivered.length;
    expect((await fire(input)).results).toEqual([{ outcome: 'skipped' }]);
    expect(sns.delivered.length).toBe(published);
  }, 90_000);

  it('an event that is not an escalation job makes the invocation fail (retried, then kept), not succeed', async () => {
    const { results } = await fire(JSON.stringify({ version: '2.0', rawPath: '/' }));
    expect(results[0]).toMatchObject({ errorType: 'Error', errorMessage: expect.stringMatching(/escalation job/) });
  }, 60_000);

  it("asks the workspace's alert manager, SigV4-signed as its role, and does not escalate an alert silenced there", async () => {
    const fingerprint = 'a11ce0000000a001';
    const firing = fixture('firing-kv-cache-critical');
    firing.groupKey = '{}:{alertname="silenced-in-amp"}';
    firing.alerts[0]!.fingerprint = fingerprint;
    expect((await receive(firing)).results[0]).toMatchObject({ statusCode: 200 });
    const key = [...scheduler.schedules.keys()].find((k) => k.includes(fingerprint))!;
    const workspacePath = '/workspaces/ws-0123abcd-4567-89ef-0123-456789abcdef';
    const alertmanager = await startLoopback({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ fingerprint, status: { state: 'suppressed', silencedBy: ['s-1'], inhibitedBy: [] } }]),
    });
    try {
      const published = sns.delivered.length;
      const { results } = await invokeDeployed(check, [JSON.parse(scheduler.schedules.get(key)!.target.Input!)], {
        endpoints: endpoints(),
        contexts: [{ awsRequestId: 'sch-2' }],
        // What ampWorkspaceArn sets on the check (infra/amp.ts), the endpoint on loopback.
        env: {
          ALERTMANAGER_URL: `${alertmanager.url}${workspacePath}/alertmanager`,
          ALERTMANAGER_SIGV4_REGION: 'eu-west-1',
          NODE_V8_COVERAGE: checkCoverage.dir,
        },
      });
      expect(results).toEqual([{ outcome: 'skipped' }]);
      expect(sns.delivered.length).toBe(published);
      // Two questions to the same API: is the alert still listed (over or not), and is it silenced or inhibited.
      expect(alertmanager.requests.length).toBeGreaterThanOrEqual(1);
      expect(alertmanager.requests.length).toBeLessThanOrEqual(2);
      for (const request of alertmanager.requests) {
        expect(request.path.startsWith(`${workspacePath}/alertmanager/api/v2/alerts?`), request.path).toBe(true);
        await expectSigV4(request, {
          service: 'aps',
          region: 'eu-west-1',
          accessKeyId: 'ASIAEXAMPLEEXAMPLE00',
          secretAccessKey: 'deployed-asset-test-secret-key',
          sessionToken: 'deployed-asset-test-session-token',
          port: Number(new URL(alertmanager.url).port),
        });
      }
    } finally {
      await alertmanager.close();
    }
  }, 90_000);

  it('loaded and called the chunks it answers for (the receiver scheduling through the SDK)', () => {
    expectClaimedChunksRan(coverage, 'deployed-escalation.test.ts');
  });

  it('the check loaded and called the chunk it answers for (the SigV4 signer)', () => {
    expectClaimedChunksRan(checkCoverage, 'deployed-escalation.test.ts');
  });
});
