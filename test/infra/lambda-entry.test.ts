/**
 * The real receiver entry (`functions/lambda.ts`), bundled exactly as the stack bundles it, run in a
 * plain Node process the way Lambda loads it (an ES module exporting `handler`), with dynalite as
 * DynamoDB and a loopback Slack: every log line an invocation writes carries its `awsRequestId`,
 * including the lines of the modules deep inside the pipeline.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { Stack } from 'aws-cdk-lib';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertReceiver } from '../../infra/receiver.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixtureText } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { scratchApp } from './synth.js';

const MARK = '--- invocation ---';

/** A Function URL request (payload format 2.0). @see https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html */
function functionUrlEvent(body: string) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/v1/alertmanager',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', host: 'abc.lambda-url.eu-west-1.on.aws', 'user-agent': 'Alertmanager/0.25.0' },
    requestContext: {
      accountId: 'anonymous', apiId: 'abc', domainName: 'abc.lambda-url.eu-west-1.on.aws', domainPrefix: 'abc', requestId: 'url-req', routeKey: '$default', stage: '$default',
      time: '30/Nov/2026:12:00:00 +0000', timeEpoch: 1795953600000,
      http: { method: 'POST', path: '/v1/alertmanager', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'Alertmanager/0.25.0' },
    },
    body,
    isBase64Encoded: false,
  };
}

describe('functions/lambda.ts, bundled, in a Lambda-like process', () => {
  const scratch = scratchApp();
  let bundle: string;
  let db: LocalDynamoDb;
  let slack: Loopback;

  beforeAll(async () => {
    const stack = new Stack(scratch.app, 'Entry');
    const receiver = new AlertReceiver(stack, 'Receiver');
    bundle = `${scratch.outdir}/${(receiver.function.node.findChild('Code') as Asset).assetPath}/index.mjs`;
    db = await startLocalDynamoDb('entry-test');
    slack = await startLoopback({ status: 200, body: 'ok' });
  });
  afterAll(async () => {
    await slack?.close();
    await db?.close();
    scratch.dispose();
  });

  async function invoke(body: string, awsRequestId: string): Promise<{ statusCode: number; lines: Record<string, unknown>[]; metrics: Record<string, unknown>[] }> {
    const script = `
      const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
      process.stdout.write(${JSON.stringify(MARK)} + '\\n');
      const event = JSON.parse(process.env.TEST_EVENT);
      const result = await handler(event, { awsRequestId: ${JSON.stringify(awsRequestId)}, functionName: 'receiver' });
      process.stdout.write(${JSON.stringify(MARK)} + JSON.stringify({ statusCode: result.statusCode }) + '\\n');`;
    const env = {
      PATH: process.env.PATH,
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
      TEST_EVENT: JSON.stringify(functionUrlEvent(body)),
    };
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { env, timeout: 15_000 });
    const [, during, after] = stdout.split(MARK);
    const printed = during!.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    // Embedded Metric Format records (`_aws`) are metrics CloudWatch extracts, not log lines.
    return { statusCode: JSON.parse(after!.trim()).statusCode, lines: printed.filter((l) => !('_aws' in l)), metrics: printed.filter((l) => '_aws' in l) };
  }

  it('puts the awsRequestId on every line of a delivered group', async () => {
    const { statusCode, lines, metrics } = await invoke(fixtureText('firing-queue-backlog-two-models'), 'req-7f3a');
    expect(statusCode).toBe(200);
    expect(slack.requests).toHaveLength(1);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.map((l) => l.event)).toContain('alert deduped');
    expect(lines.filter((l) => l.awsRequestId !== 'req-7f3a')).toEqual([]);
    expect(metrics.length).toBeGreaterThan(0);
  });

  it('and on the error line of a rejected request', async () => {
    const { statusCode, lines } = await invoke('{"not": "a webhook"}', 'req-9c1d');
    expect(statusCode).toBe(400);
    expect(lines).toEqual([expect.objectContaining({ event: 'request rejected', awsRequestId: 'req-9c1d' })]);
  });
});
