/**
 * Kept acknowledgement follow-ups as deployed (the escalation variant, which has acknowledgement links:
 * `-c publicUrl=…`): the receiver's asset, invoked the way EventBridge Scheduler invokes it for a follow-up's
 * try (asynchronously, with the schedule's `Input` `{"followUp": "<id>"}` as the event), tries the kept
 * follow-up once more against a loopback Slack. Slack answering 429: the follow-up stays kept and the asset
 * creates the next try's one-time schedule through Scheduler's API (a loopback stand-in; the exact
 * `CreateSchedule` request checked), in the group, with the role and dead-letter queue the template gives
 * it, invoking the function's own unqualified ARN, which is exactly what that role may invoke. Slack
 * answering 200: the "acknowledged" notice goes out, the follow-up is dropped and counted. The stack's
 * wiring is the template's (`FOLLOW_UP_*` resolved to the stand-ins' names); the table is dynalite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionUrlEvent } from '../../scripts/lambda-local.js';
import { alertStores } from '../../shared/store/alert-stores.js';
import { DynamoDbFollowUpStore } from '../../shared/store/follow-ups.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
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
import { invokeDeployed, PHYSICAL, templateEnvironment } from './assembly/invoke.js';

const TOKEN = 'deployed-follow-ups-token-0123456789abcdef';
const ACK_SECRET = 'deployed-follow-ups-ack-secret-0123456789abcdef';

describe('kept follow-ups in Lambda, tried again by their schedules, as deployed', () => {
  const { template } = deployed('escalation');
  const receiver = deployedFunction('escalation', 'Receiver/Function');
  const env = templateEnvironment(receiver, template.Resources);
  const coverage = chunkCoverage(receiver);
  /** The receiver's ARN as CloudFormation names it: what the follow-up role may invoke. */
  const functionArn = PHYSICAL.attribute(receiver.logicalId, 'Arn', template.Resources[receiver.logicalId]!);
  let db: LocalDynamoDb;
  let secrets: SecretsManagerStandIn;
  let scheduler: SchedulerStandIn;
  let sns: SnsPlatform;
  let slack: Loopback;
  let store: DynamoDbFollowUpStore;
  let alert: { fingerprint: string; startsAt: string };

  const endpoints = () => ({
    dynamodb: db.endpoint,
    sns: sns.endpoint,
    secretsManager: secrets.endpoint,
    scheduler: scheduler.endpoint,
  });
  /** Invokes the asset with `events`, as this function under an alias (`invokedFunctionArn` qualified). */
  const invoke = (events: unknown[], awsRequestId: string) =>
    invokeDeployed(receiver, events, {
      endpoints: endpoints(),
      env: { NODE_V8_COVERAGE: coverage.dir },
      contexts: events.map(() => ({
        awsRequestId,
        functionName: receiver.logicalId,
        invokedFunctionArn: `${functionArn}:live`,
      })),
      timeoutMs: 90_000,
    });
  /** A follow-up of the announced alert, kept as the ack route keeps one, due now. */
  const kept = async (id: string) => {
    const now = Date.now();
    const request = { kind: 'acknowledged' as const, channel: 'slack', alerts: [alert] };
    await store.add({ id, request, dueAtMs: now - 1000, attempts: 1, firstAtMs: now - 5000 }, now + 3_600_000);
  };

  beforeAll(async () => {
    [db, sns, scheduler, slack] = await Promise.all([
      startLocalDynamoDb(env.TABLE_NAME!),
      startSnsPlatform(),
      startScheduler(),
      startLoopback({ status: 200, body: 'ok' }),
    ]);
    secrets = await startSecretsManager({
      [env.SETTINGS_SECRET_ARN!]: {
        WEBHOOK_TOKEN: TOKEN,
        ACK_SECRET,
        SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/fu`,
      },
    });
    store = new DynamoDbFollowUpStore(db.client, { tableName: db.tableName });
    // The alert as the receiver recorded it: a follow-up is about an occurrence it finds in the table.
    const firing = fixture('firing-kv-cache-critical');
    const { results } = await invoke(
      [functionUrlEvent(JSON.stringify(firing), { authorization: `Bearer ${TOKEN}` })],
      'req-announce',
    );
    expect(results[0]).toMatchObject({ statusCode: 200 });
    const fingerprint = firing.alerts[0]!.fingerprint;
    const records = await alertStores(db.client, { tableName: db.tableName, ttlSeconds: 3600 }).records.getMany(
      [fingerprint],
      Date.now(),
    );
    alert = { fingerprint, startsAt: records.get(fingerprint)!.startsAt };
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled([db, secrets, scheduler, sns, slack].map((s) => s?.close()));
  });

  it('the template wires the follow-up schedules into the receiver', () => {
    expect(env.FOLLOW_UP_SCHEDULE_GROUP).toBeTruthy();
    expect(env.FOLLOW_UP_ROLE_ARN).toMatch(/^arn:aws:iam::123456789012:role\/FollowUpsSchedulerRole/);
    expect(env.FOLLOW_UP_DEAD_LETTER_QUEUE_ARN).toMatch(
      /^arn:aws:sqs:eu-west-1:123456789012:FollowUpsScheduleDeadLetters/,
    );
    // Apart from escalation's: its role may invoke only the escalation check.
    expect(env.FOLLOW_UP_SCHEDULE_GROUP).not.toBe(env.ESCALATION_SCHEDULE_GROUP);
    expect(env.FOLLOW_UP_ROLE_ARN).not.toBe(env.ESCALATION_ROLE_ARN);
  });

  it('Slack answers 429 again: the follow-up stays kept, and its next try is scheduled through Scheduler', async () => {
    const id = '5f0c6b2e-6f1a-4b7e-9c1d-000000000429';
    await kept(id);
    slack.reply({ status: 429, headers: { 'retry-after': '45' }, body: 'rate_limited' });
    const before = scheduler.server.requests.length;
    const { results } = await invoke([{ followUp: id }], 'sch-fu-1');
    expect(results).toEqual([{ followUp: 'retry' }]);
    const { dueAtMs } = (await store.list()).find((f) => f.id === id)!;
    // https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
    const calls = scheduler.server.requests.slice(before);
    const second = Math.ceil(dueAtMs / 1000);
    expect(calls.map((r) => [r.method, r.path])).toEqual([['POST', `/schedules/fu-${id}-${second}`]]);
    expect(JSON.parse(calls[0]!.body.toString('utf8'))).toEqual({
      ActionAfterCompletion: 'DELETE',
      ClientToken: expect.any(String),
      Description: `llm-alert-pipeline acknowledgement follow-up ${id}, tried again`,
      FlexibleTimeWindow: { Mode: 'OFF' },
      GroupName: env.FOLLOW_UP_SCHEDULE_GROUP,
      ScheduleExpression: `at(${new Date(second * 1000).toISOString().slice(0, 19)})`,
      ScheduleExpressionTimezone: 'UTC',
      Target: {
        Arn: functionArn,
        DeadLetterConfig: { Arn: env.FOLLOW_UP_DEAD_LETTER_QUEUE_ARN },
        Input: JSON.stringify({ followUp: id }),
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 10 },
        RoleArn: env.FOLLOW_UP_ROLE_ARN,
      },
    });
    // Retry-After (45 s) from the 429.
    expect(dueAtMs - Date.now()).toBeGreaterThan(30_000);
    expect(dueAtMs - Date.now()).toBeLessThanOrEqual(45_000);
  }, 120_000);

  it('Slack answers 200: the kept follow-up goes out, is dropped and counted', async () => {
    const id = '5f0c6b2e-6f1a-4b7e-9c1d-000000000200';
    await kept(id);
    const sent = slack.requests.length;
    const { results, during, lines: all } = await invoke([{ followUp: id }], 'sch-fu-2');
    expect(results).toEqual([{ followUp: 'delivered' }]);
    expect((await store.list()).map((f) => f.id)).not.toContain(id);
    const posted = slack.requests.slice(sent);
    expect(posted.map((r) => [r.method, r.path])).toEqual([['POST', '/services/T0/B0/fu']]);
    expect(posted[0]!.body.toString('utf8')).toMatch(/ACKNOWLEDGED/);
    const lines = during[0]!;
    // The stack wired the schedules: no cold-start warning.
    expect(all.filter((l) => l.event === 'follow-up retries off')).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ event: 'follow-up delivered on retry', id }));
    const emf = JSON.stringify(lines.filter((l) => '_aws' in l));
    expect(emf).toContain('follow_ups_total');
    expect(emf).toContain('delivered_on_retry');
  }, 120_000);

  it('the schedule names exactly the function its role may invoke', () => {
    const policies = Object.values(template.Resources).filter(
      (r) =>
        r.Type === 'AWS::IAM::Policy' &&
        JSON.stringify((r.Properties as { Roles: unknown }).Roles).includes('FollowUpsSchedulerRole'),
    );
    const invokes = policies.flatMap((p) =>
      (
        p.Properties as { PolicyDocument: { Statement: { Action: string; Resource: unknown }[] } }
      ).PolicyDocument.Statement.filter((s) => s.Action === 'lambda:InvokeFunction'),
    );
    expect(invokes).toEqual([
      { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: { 'Fn::GetAtt': [receiver.logicalId, 'Arn'] } },
    ]);
    const [schedule] = [...scheduler.schedules.values()].filter((s) => s.name.startsWith('fu-'));
    expect(schedule!.target.Arn).toBe(functionArn);
  });

  it('loaded and called the chunks it answers for (the follow-up schedules)', () => {
    expectClaimedChunksRan(coverage, 'deployed-follow-ups.test.ts');
  });
});
