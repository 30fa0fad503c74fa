/**
 * The real receiver entry (`functions/lambda.ts`), bundled exactly as the stack bundles it, run in a
 * plain Node process the way Lambda loads it (an ES module exporting `handler`), with dynalite as
 * DynamoDB and a loopback Slack: every log line an invocation writes carries its `awsRequestId`,
 * including the lines of the modules deep inside the pipeline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { bundleReceiver, functionUrlEvent, invokeBundle, type ReceiverBundle } from '../../scripts/lambda-local.js';
import { fixtureText } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';

describe('functions/lambda.ts, bundled, in a Lambda-like process', () => {
  let bundle: ReceiverBundle;
  let db: LocalDynamoDb;
  let slack: Loopback;

  beforeAll(async () => {
    bundle = bundleReceiver();
    db = await startLocalDynamoDb('entry-test');
    slack = await startLoopback({ status: 200, body: 'ok' });
  });
  afterAll(async () => {
    await slack?.close();
    await db?.close();
    bundle?.dispose();
  });

  async function invoke(body: string, awsRequestId: string): Promise<{ statusCode: number; lines: Record<string, unknown>[]; metrics: Record<string, unknown>[] }> {
    const env = {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      TABLE_NAME: db.tableName,
      // No WEBHOOK_TOKEN here: the Lambda fails closed without one unless told otherwise.
      ALLOW_UNAUTHENTICATED: 'true',
      SLACK_WEBHOOK_URL: `${slack.url}/services/T0/B0/entry`,
      LOG_LEVEL: 'debug',
    };
    const { results, during } = await invokeBundle(bundle.path, env, [functionUrlEvent(body)], {
      contexts: [{ awsRequestId, functionName: 'receiver' }],
    });
    const printed = during[0]!;
    // Embedded Metric Format records (`_aws`) are metrics CloudWatch extracts, not log lines.
    return { statusCode: results[0].statusCode, lines: printed.filter((l) => !('_aws' in l)), metrics: printed.filter((l) => '_aws' in l) };
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
});
