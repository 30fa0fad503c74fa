/**
 * `npm run lambda:invoke -- <webhook.json | sns-event.json> [...]`: runs the deployed receiver's code
 * locally. Bundles functions/lambda.ts as `cdk deploy` does, starts the embedded DynamoDB, and sends
 * each file to one cold-started bundle: an Alertmanager webhook body as an authenticated Function URL
 * event, a Lambda SNS event (e.g. test/fixtures/amp/*.event.json, what AMP publishes) as it is.
 * Prints, per file, every line the function wrote during its invocation (JSON logs with the
 * invocation's `awsRequestId`, the EMF records CloudWatch would turn into metrics, the console
 * channel's rendering) and then the handler's result.
 *
 * Settings come from the environment as under `npm start` (e.g. SLACK_WEBHOOK_URL, PROMETHEUS_URL);
 * WEBHOOK_TOKEN defaults to a random one used for these events. The DynamoDB endpoint, region and
 * credentials are always the embedded store's.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isSnsEvent } from '../shared/amp/is-sns-event.js';
import { startLocalDynamoDb } from '../shared/store/local-dynamodb.js';
import { bundleReceiver, functionUrlEvent, invokeBundle } from './lambda-local.js';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: npm run lambda:invoke -- <alertmanager-webhook.json | sns-event.json> [...]');
  process.exit(2);
}

const TABLE = 'llm-alert-pipeline-local';
const token = process.env.WEBHOOK_TOKEN ?? randomBytes(24).toString('base64url');
const events = files.map((file) => {
  const text = readFileSync(file, 'utf8');
  return isSnsEvent(parseOrUndefined(text))
    ? JSON.parse(text)
    : functionUrlEvent(text, { authorization: `Bearer ${token}` });
});

/** A webhook file need not be valid JSON (the receiver's answer to a bad body is worth seeing too). */
function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const db = await startLocalDynamoDb(TABLE);
const bundle = bundleReceiver();
try {
  const { results, raw } = await invokeBundle(
    bundle.path,
    {
      ...(process.env as Record<string, string>),
      WEBHOOK_TOKEN: token,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: db.endpoint,
      TABLE_NAME: TABLE,
      AWS_LAMBDA_FUNCTION_NAME: 'llm-alert-pipeline-receiver',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    events,
    {
      contexts: files.map((_, i) => ({ awsRequestId: `local-${i + 1}`, functionName: 'llm-alert-pipeline-receiver' })),
    },
  );
  for (const line of raw[0]!) console.log(line);
  files.forEach((file, i) => {
    console.log(`── ${file} (awsRequestId local-${i + 1})`);
    for (const line of raw[i + 1] ?? []) console.log(line);
    console.log(`── result: ${JSON.stringify(results[i])}`);
  });
} finally {
  bundle.dispose();
  await db.close();
}
