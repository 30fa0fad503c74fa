/**
 * The deployed receiver as Lambda runs it: functions/lambda.ts bundled with the construct's real
 * esbuild settings, loaded as an ES module in a plain Node process and invoked with Function URL
 * events (payload format 2.0) and the heartbeat schedule's event, against dynalite and a loopback
 * Slack. Checks that it fails closed without WEBHOOK_TOKEN and writes EMF metric lines under the
 * same names as GET /metrics.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { Stack } from 'aws-cdk-lib';
import type { Asset } from 'aws-cdk-lib/aws-s3-assets';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AlertReceiver } from '../../infra/receiver.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { HEARTBEAT_CHECK_EVENT } from '../../shared/heartbeat/event.js';
import { fixtureText } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { scratchApp } from './synth.js';

const TOKEN = 'lambda-bundle-token-0123456789';
const TABLE = 'lambda-bundle';

interface Emf {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [key: string]: unknown;
}

/** A Function URL request event (payload format 2.0), as Lambda passes it. */
function urlEvent(body: string, headers: Record<string, string> = {}) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: '/v1/alertmanager',
    rawQueryString: '',
    headers: { 'content-type': 'application/json', 'user-agent': 'Alertmanager/0.25.0', ...headers },
    requestContext: {
      accountId: 'anonymous', apiId: 'abc', domainName: 'abc.lambda-url.eu-west-1.on.aws', domainPrefix: 'abc', requestId: 'r-1',
      routeKey: '$default', stage: '$default', time: '30/Nov/2026:12:00:00 +0000', timeEpoch: 1795003200000,
      http: { method: 'POST', path: '/v1/alertmanager', protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'Alertmanager/0.25.0' },
    },
    body,
    isBase64Encoded: false,
  };
}

describe('functions/lambda.ts bundled and invoked as Lambda does', () => {
  const scratch = scratchApp();
  let bundle: string;
  let db: LocalDynamoDb;
  let slack: Loopback;

  beforeAll(async () => {
    const stack = new Stack(scratch.app, 'Bundle');
    const receiver = new AlertReceiver(stack, 'Receiver');
    bundle = `${scratch.outdir}/${(receiver.function.node.findChild('Code') as Asset).assetPath}/index.mjs`;
    db = await startLocalDynamoDb(TABLE);
    slack = await startLoopback();
  }, 120_000);
  afterAll(async () => {
    scratch.dispose();
    await Promise.allSettled([db?.close(), slack?.close()]);
  });
  beforeEach(() => {
    slack.requests.length = 0;
  });

  /** Runs the events through one cold-started module, in order; returns the handler's results and every stdout line. */
  async function invoke(env: Record<string, string>, events: unknown[]): Promise<{ results: any[]; lines: Record<string, unknown>[] }> {
    const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(bundle).href)});
for (const event of JSON.parse(process.env.EVENTS)) process.stdout.write('RESULT ' + JSON.stringify(await handler(event, {})) + '\\n');`;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 30_000,
      env: {
        PATH: process.env.PATH ?? '', AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test',
        AWS_ENDPOINT_URL_DYNAMODB: db.endpoint, TABLE_NAME: TABLE, AWS_LAMBDA_FUNCTION_NAME: 'receiver',
        SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/lambda`, EVENTS: JSON.stringify(events), ...env,
      },
    });
    const results = stdout.split('\n').filter((l) => l.startsWith('RESULT ')).map((l) => JSON.parse(l.slice(7)));
    const lines = stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    return { results, lines };
  }

  const emf = (lines: Record<string, unknown>[]) => lines.filter((l): l is Emf => '_aws' in l);
  const emfNamed = (lines: Record<string, unknown>[], name: string) => emf(lines).filter((l) => l._aws.CloudWatchMetrics[0]!.Metrics.some((m) => m.Name === name));

  it('without WEBHOOK_TOKEN refuses every webhook with 503, sends nothing, logs an error and counts it', async () => {
    const { results, lines } = await invoke({}, [urlEvent(fixtureText('firing-kv-cache-critical'))]);
    expect(results[0]).toMatchObject({ statusCode: 503 });
    expect(JSON.parse(results[0].body).error).toMatch(/WEBHOOK_TOKEN is not configured/);
    expect(slack.requests).toHaveLength(0);
    expect(lines.filter((l) => l.level === 'error').map((l) => l.event)).toEqual(['no WEBHOOK_TOKEN', 'webhook refused']);
    const [refused] = emfNamed(lines, 'llm_alert_pipeline_webhook_unauthenticated_total');
    expect(refused).toMatchObject({ reason: 'no_token_configured', llm_alert_pipeline_webhook_unauthenticated_total: 1 });
    expect(refused!._aws.CloudWatchMetrics[0]).toMatchObject({ Namespace: 'LlmAlertPipeline', Dimensions: [['reason'], []] });
    expect(emfNamed(lines, 'llm_alert_pipeline_webhook_requests_total')[0]).toMatchObject({ code: '503' });
  }, 60_000);

  it('with WEBHOOK_TOKEN delivers and writes EMF lines under the names of GET /metrics', async () => {
    const { results, lines } = await invoke({ WEBHOOK_TOKEN: TOKEN }, [
      urlEvent(fixtureText('firing-kv-cache-critical'), { authorization: `Bearer ${TOKEN}` }),
      urlEvent(fixtureText('firing-kv-cache-critical'), { authorization: 'Bearer not-the-token-0123456789' }),
    ]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 401]);
    expect(slack.requests).toHaveLength(1);
    const names = new Set(emf(lines).flatMap((l) => l._aws.CloudWatchMetrics[0]!.Metrics.map((m) => m.Name)));
    for (const name of ['alerts_received_total', 'dedupe_decisions_total', 'notifications_total', 'delivery_duration_seconds', 'enrichment_duration_seconds', 'enrichment_unavailable_total', 'webhook_requests_total', 'webhook_unauthenticated_total']) {
      expect(names, name).toContain(`llm_alert_pipeline_${name}`);
    }
    expect(emfNamed(lines, 'llm_alert_pipeline_notifications_total')[0]).toMatchObject({ channel: 'slack', outcome: 'delivered', reason: 'ok', llm_alert_pipeline_notifications_total: 1 });
    expect(emfNamed(lines, 'llm_alert_pipeline_notifications_total')[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['channel', 'outcome', 'reason'], []]);
    expect(emfNamed(lines, 'llm_alert_pipeline_delivery_duration_seconds')[0]!._aws.CloudWatchMetrics[0]!.Metrics).toEqual([{ Name: 'llm_alert_pipeline_delivery_duration_seconds', Unit: 'Seconds' }]);
    expect(emfNamed(lines, 'llm_alert_pipeline_webhook_unauthenticated_total')[0]).toMatchObject({ reason: 'invalid_token' });
  }, 60_000);

  it('counts a failed delivery also as llm_alert_pipeline_notifications_failed without dimensions', async () => {
    slack.reply({ status: 404, body: 'channel_not_found' });
    const { results, lines } = await invoke({ WEBHOOK_TOKEN: TOKEN, DELIVERY_RETRIES: '0' }, [urlEvent(fixtureText('firing-gpu-memory-leak'), { authorization: `Bearer ${TOKEN}` })]);
    expect(results[0]).toMatchObject({ statusCode: 502 });
    expect(emfNamed(lines, 'llm_alert_pipeline_notifications_total')[0]).toMatchObject({ channel: 'slack', outcome: 'failed', reason: 'client_error' });
    const [failed] = emfNamed(lines, 'llm_alert_pipeline_notifications_failed');
    expect(failed).toMatchObject({ llm_alert_pipeline_notifications_failed: 1 });
    expect(failed!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([[]]);
  }, 60_000);

  it('runs the heartbeat check on the schedule event', async () => {
    const watchdog = JSON.parse(fixtureText('firing-kv-cache-critical'));
    watchdog.externalURL = 'http://am-lambda.example:9093';
    for (const alert of watchdog.alerts) alert.labels = { alertname: 'Watchdog', severity: 'none' };
    const { results, lines } = await invoke({ WEBHOOK_TOKEN: TOKEN }, [urlEvent(JSON.stringify(watchdog), { authorization: `Bearer ${TOKEN}` }), HEARTBEAT_CHECK_EVENT]);
    expect(results[0]).toMatchObject({ statusCode: 200 });
    expect(results[1]).toEqual({ heartbeats: { 'http://am-lambda.example:9093': 'ok' } });
    expect(slack.requests).toHaveLength(0);
    expect(emfNamed(lines, 'llm_alert_pipeline_heartbeat_missing')[0]).toMatchObject({ alertmanager: 'http://am-lambda.example:9093', llm_alert_pipeline_heartbeat_missing: 0 });
  }, 60_000);
});
