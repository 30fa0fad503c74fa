/**
 * The receiver as deployed (the default variant's asset), run in a plain Node process the way Lambda
 * loads it (an ES module exporting `handler`), with dynalite as DynamoDB and loopback Slack and SNS:
 * every log line an invocation writes carries its `awsRequestId`, including the lines of the modules
 * deep inside the pipeline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { functionUrlEvent } from '../../scripts/lambda-local.js';
import { fixtureText } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startSnsPlatform, type SnsPlatform } from '../integration/channels/platforms.js';
import { startSecretsManager, type SecretsManagerStandIn } from './assembly/aws-stand-ins.js';
import { deployed, deployedFunction } from './assembly/deployed.js';
import { invokeDeployed, templateEnvironment } from './assembly/invoke.js';
import { chunkCoverage } from './assembly/chunks.js';
import { expectClaimedChunksRan } from './assembly/claims.js';
import { DynamoDbAlertSetStore } from '../../shared/store/alert-set.js';
import { DynamoDbAckSetJobStore } from '../../shared/store/ack-set-jobs.js';

describe('the deployed receiver, in a Lambda-like process', () => {
  const receiver = deployedFunction('default', 'Receiver/Function');
  const coverage = chunkCoverage(receiver);
  let db: LocalDynamoDb;
  let slack: Loopback;
  let sns: SnsPlatform;
  let secrets: SecretsManagerStandIn;

  beforeAll(async () => {
    db = await startLocalDynamoDb('entry-test');
    slack = await startLoopback({ status: 200, body: 'ok' });
    sns = await startSnsPlatform();
    const { SETTINGS_SECRET_ARN } = templateEnvironment(receiver, deployed('default').template.Resources);
    secrets = await startSecretsManager({ [SETTINGS_SECRET_ARN!]: {} });
  });
  afterAll(async () => {
    await Promise.allSettled([slack?.close(), db?.close(), sns?.close(), secrets?.close()]);
  });

  async function invoke(
    body: string,
    awsRequestId: string,
  ): Promise<{ statusCode: number; lines: Record<string, unknown>[]; metrics: Record<string, unknown>[] }> {
    const env = {
      TABLE_NAME: db.tableName,
      // No WEBHOOK_TOKEN here: the Lambda fails closed without one unless told otherwise.
      ALLOW_UNAUTHENTICATED: 'true',
      SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/entry`,
      LOG_LEVEL: 'debug',
    };
    const { results, during } = await invokeDeployed(receiver, [functionUrlEvent(body)], {
      endpoints: { dynamodb: db.endpoint, sns: sns.endpoint, secretsManager: secrets.endpoint },
      env,
      contexts: [{ awsRequestId, functionName: 'receiver' }],
    });
    const printed = during[0]!;
    // Embedded Metric Format records (`_aws`) are metrics CloudWatch extracts, not log lines.
    return {
      statusCode: results[0].statusCode,
      lines: printed.filter((l) => !('_aws' in l)),
      metrics: printed.filter((l) => '_aws' in l),
    };
  }

  it('puts the awsRequestId on every line of a delivered group', async () => {
    const { statusCode, lines, metrics } = await invoke(fixtureText('firing-queue-backlog-two-models'), 'req-7f3a');
    expect(statusCode).toBe(200);
    expect(slack.requests).toHaveLength(1);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.map((l) => l.event)).toContain('alert deduped');
    expect(lines.filter((l) => l.awsRequestId !== 'req-7f3a')).toEqual([]);
    expect(metrics.length).toBeGreaterThan(0);
  }, 60_000); // a cold start of the bundle in a child process: seconds under a loaded CI machine

  it('and on the error line of a rejected request', async () => {
    const { statusCode, lines } = await invoke('{"not": "a webhook"}', 'req-9c1d');
    expect(statusCode).toBe(400);
    expect(lines).toEqual([expect.objectContaining({ event: 'request rejected', awsRequestId: 'req-9c1d' })]);
  }, 60_000);

  it('runs a step of an alert set acknowledgement when invoked with its event (asynchronously, by itself)', async () => {
    const { results, during, lines } = await invokeDeployed(receiver, [{ ackSetStep: 'no-such-set' }], {
      endpoints: { dynamodb: db.endpoint, sns: sns.endpoint, secretsManager: secrets.endpoint },
      env: {
        TABLE_NAME: db.tableName,
        ALLOW_UNAUTHENTICATED: 'true',
        PUBLIC_URL: 'https://alerts.example.com',
        ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
        SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/entry`,
      },
      contexts: [{ awsRequestId: 'req-set1', functionName: 'receiver' }],
    });
    // The job is read from the table (none here): the step ends without acknowledging anything.
    expect(results[0]).toEqual({ ackSetStep: 'done' });
    expect(during[0]).toContainEqual(
      expect.objectContaining({ event: 'alert set acknowledgement not found', set: 'no-such-set' }),
    );
    // Acknowledgements on, without the stack's follow-up schedules (FOLLOW_UP_*): said once, at cold start.
    expect(lines.filter((l) => l.event === 'follow-up retries off')).toEqual([
      expect.objectContaining({ level: 'warn', reason: expect.stringContaining('FOLLOW_UP_SCHEDULE_GROUP') }),
    ]);
  }, 60_000);

  it('answers a follow-up event with "off" when no follow-up schedules are wired (nothing kept to retry)', async () => {
    const { results } = await invokeDeployed(receiver, [{ followUp: 'no-such-follow-up' }], {
      endpoints: { dynamodb: db.endpoint, sns: sns.endpoint, secretsManager: secrets.endpoint },
      env: { TABLE_NAME: db.tableName, ALLOW_UNAUTHENTICATED: 'true' },
      contexts: [{ awsRequestId: 'req-fu-off', functionName: 'receiver' }],
    });
    expect(results).toEqual([{ followUp: 'off' }]);
  }, 60_000);

  it("dispatches a long alert set's next step by invoking itself: Lambda's Invoke, asynchronous, its own name", async () => {
    const lambdaApi = await startLoopback({ status: 202, body: '' });
    try {
      const now = Date.now();
      const id = 'set#entry-dispatch';
      // One alert more than a step takes: the first step leaves one, so the next is dispatched.
      const fingerprints = Array.from({ length: 1001 }, (_, i) => i.toString(16).padStart(16, '0'));
      await new DynamoDbAlertSetStore(db.client, { tableName: db.tableName }).put(
        id,
        { fingerprints, groupKey: 'g' },
        now + 3_600_000,
      );
      const link = { group: 'g', channel: 'slack', issuedAt: Math.floor(now / 1000), named: fingerprints.slice(0, 50) };
      const job = { id, link, by: 'alice', at: new Date(now).toISOString(), total: 1001, acked: 0, paced: 0 };
      await new DynamoDbAckSetJobStore(db.client, { tableName: db.tableName }).start(
        { ...job, pacedNotBeforeMs: 0, updatedAtMs: now },
        now + 3_600_000,
      );
      const { results } = await invokeDeployed(receiver, [{ ackSetStep: id }], {
        endpoints: {
          dynamodb: db.endpoint,
          sns: sns.endpoint,
          secretsManager: secrets.endpoint,
          lambda: lambdaApi.url,
        },
        env: {
          TABLE_NAME: db.tableName,
          ALLOW_UNAUTHENTICATED: 'true',
          PUBLIC_URL: 'https://alerts.example.com',
          ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
          SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/entry`,
          NODE_V8_COVERAGE: coverage.dir,
        },
        contexts: [{ awsRequestId: 'req-set2', functionName: 'llm-alert-pipeline-receiver' }],
        timeoutMs: 90_000,
      });
      expect(results[0]).toEqual({ ackSetStep: 'more' });
      // https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
      expect(lambdaApi.requests.map((r) => [r.method, r.path, r.headers['x-amz-invocation-type']])).toEqual([
        ['POST', '/2015-03-31/functions/llm-alert-pipeline-receiver/invocations', 'Event'],
      ]);
      expect(JSON.parse(lambdaApi.requests[0]!.body.toString())).toEqual({ ackSetStep: id });
    } finally {
      await lambdaApi.close();
    }
  }, 120_000);

  it('loaded and called the chunks it answers for (the Lambda client of that dispatch)', () => {
    expectClaimedChunksRan(coverage, 'lambda-entry.test.ts');
  });
});
