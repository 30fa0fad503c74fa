/**
 * The deployed receiver as Lambda runs it: the default variant's `Receiver/Function` asset, loaded as an
 * ES module in a plain Node process and invoked with Function URL events (payload format 2.0) and the
 * heartbeat schedule's event as the template gives it to EventBridge Scheduler, against dynalite and a
 * loopback Slack. Checks that it fails closed without WEBHOOK_TOKEN and writes EMF metric lines under the
 * same names as GET /metrics.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { functionUrlEvent as urlEvent } from '../../scripts/lambda-local.js';
import { fixtureText } from '../helpers/fixtures.js';
import { startFeishuPlatform, startSnsPlatform, type SnsPlatform } from '../integration/channels/platforms.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startSecretsManager, type SecretsManagerStandIn } from './assembly/aws-stand-ins.js';
import { chunkCoverage } from './assembly/chunks.js';
import { expectClaimedChunksRan } from './assembly/claims.js';
import { deployed, deployedFunction } from './assembly/deployed.js';
import { invokeDeployed, templateEnvironment } from './assembly/invoke.js';

const TOKEN = 'lambda-bundle-token-0123456789';
const TABLE = 'lambda-bundle';

interface Emf {
  _aws: {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [key: string]: unknown;
}

describe('the deployed receiver, invoked as Lambda does', () => {
  const receiver = deployedFunction('default', 'Receiver/Function');
  const { template } = deployed('default');
  const coverage = chunkCoverage(receiver);
  let db: LocalDynamoDb;
  let slack: Loopback;
  let secrets: SecretsManagerStandIn;
  let sns: SnsPlatform;

  beforeAll(async () => {
    db = await startLocalDynamoDb(TABLE);
    sns = await startSnsPlatform();
    slack = await startLoopback();
    // A settings secret without WEBHOOK_TOKEN (the stack generates one; a user may have replaced the JSON).
    secrets = await startSecretsManager({
      [templateEnvironment(receiver, template.Resources).SETTINGS_SECRET_ARN!]: {},
    });
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled([db?.close(), slack?.close(), secrets?.close(), sns?.close()]);
  });
  beforeEach(() => {
    slack.requests.length = 0;
  });

  /** Runs the events through one cold-started bundle, in order; returns the handler's results and every stdout line. */
  function invoke(env: Record<string, string>, events: unknown[]) {
    return invokeDeployed(receiver, events, {
      endpoints: { dynamodb: db.endpoint, secretsManager: secrets.endpoint, sns: sns.endpoint },
      env: {
        TABLE_NAME: TABLE,
        SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/lambda`,
        NODE_V8_COVERAGE: coverage.dir,
        ...env,
      },
    });
  }

  /** The event the heartbeat schedule of the template invokes the receiver with (its target's `Input`). */
  const heartbeatEvent = () => {
    const schedules = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Scheduler::Schedule');
    expect(schedules).toHaveLength(1);
    expect(schedules[0]!.Properties!.Target.Arn).toEqual({ 'Fn::GetAtt': [receiver.logicalId, 'Arn'] });
    return JSON.parse(schedules[0]!.Properties!.Target.Input as string) as unknown;
  };

  const emf = (lines: Record<string, unknown>[]) => lines.filter((l): l is Emf => '_aws' in l);
  /** The notification record of the Slack channel (the stack's SNS topic is notified too). */
  const slackNotified = (lines: Record<string, unknown>[]) =>
    emfNamed(lines, 'llm_alert_pipeline_notifications_total').find((l) => l.channel === 'slack');
  const emfNamed = (lines: Record<string, unknown>[], name: string) =>
    emf(lines).filter((l) => l._aws.CloudWatchMetrics[0]!.Metrics.some((m) => m.Name === name));

  it('without WEBHOOK_TOKEN refuses every webhook with 503, sends nothing, logs an error and counts it', async () => {
    const { results, lines } = await invoke({}, [urlEvent(fixtureText('firing-kv-cache-critical'))]);
    expect(results[0]).toMatchObject({ statusCode: 503 });
    expect(JSON.parse(results[0].body).error).toMatch(/WEBHOOK_TOKEN is not configured/);
    expect(slack.requests).toHaveLength(0);
    expect(lines.filter((l) => l.level === 'error').map((l) => l.event)).toEqual([
      'no WEBHOOK_TOKEN',
      'webhook refused',
    ]);
    const [refused] = emfNamed(lines, 'llm_alert_pipeline_webhook_unauthenticated_total');
    expect(refused).toMatchObject({
      reason: 'no_token_configured',
      llm_alert_pipeline_webhook_unauthenticated_total: 1,
    });
    expect(refused!._aws.CloudWatchMetrics[0]).toMatchObject({
      Namespace: 'LlmAlertPipeline',
      Dimensions: [['reason'], []],
    });
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
    for (const name of [
      'alerts_received_total',
      'dedupe_decisions_total',
      'notifications_total',
      'delivery_duration_seconds',
      'enrichment_duration_seconds',
      'enrichment_unavailable_total',
      'webhook_requests_total',
      'webhook_unauthenticated_total',
    ]) {
      expect(names, name).toContain(`llm_alert_pipeline_${name}`);
    }
    expect(slackNotified(lines)).toMatchObject({
      channel: 'slack',
      outcome: 'delivered',
      reason: 'ok',
      llm_alert_pipeline_notifications_total: 1,
    });
    expect(slackNotified(lines)!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['channel', 'outcome', 'reason'], []]);
    expect(
      emfNamed(lines, 'llm_alert_pipeline_delivery_duration_seconds')[0]!._aws.CloudWatchMetrics[0]!.Metrics,
    ).toEqual([{ Name: 'llm_alert_pipeline_delivery_duration_seconds', Unit: 'Seconds' }]);
    expect(emfNamed(lines, 'llm_alert_pipeline_webhook_unauthenticated_total')[0]).toMatchObject({
      reason: 'invalid_token',
    });
  }, 60_000);

  it('counts a failed delivery also as llm_alert_pipeline_notifications_failed without dimensions', async () => {
    slack.reply({ status: 404, body: 'channel_not_found' });
    const { results, lines } = await invoke({ WEBHOOK_TOKEN: TOKEN, DELIVERY_RETRIES: '0' }, [
      urlEvent(fixtureText('firing-gpu-memory-leak'), { authorization: `Bearer ${TOKEN}` }),
    ]);
    expect(results[0]).toMatchObject({ statusCode: 502 });
    expect(slackNotified(lines)).toMatchObject({
      channel: 'slack',
      outcome: 'failed',
      reason: 'client_error',
    });
    const [failed] = emfNamed(lines, 'llm_alert_pipeline_notifications_failed');
    expect(failed).toMatchObject({ llm_alert_pipeline_notifications_failed: 1 });
    expect(failed!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([[]]);
  }, 60_000);

  it('runs the heartbeat check on the schedule event', async () => {
    const watchdog = JSON.parse(fixtureText('firing-kv-cache-critical'));
    watchdog.externalURL = 'http://am-lambda.example:9093';
    for (const alert of watchdog.alerts) alert.labels = { alertname: 'Watchdog', severity: 'none' };
    const { results, lines } = await invoke({ WEBHOOK_TOKEN: TOKEN }, [
      urlEvent(JSON.stringify(watchdog), { authorization: `Bearer ${TOKEN}` }),
      heartbeatEvent(),
    ]);
    expect(results[0]).toMatchObject({ statusCode: 200 });
    expect(results[1]).toEqual({ heartbeats: { 'http://am-lambda.example:9093': 'ok' } });
    expect(slack.requests).toHaveLength(0);
    expect(emfNamed(lines, 'llm_alert_pipeline_heartbeat_missing')[0]).toMatchObject({
      alertmanager: 'http://am-lambda.example:9093',
      llm_alert_pipeline_heartbeat_missing: 0,
    });
  }, 60_000);

  // The routing file's reader (yaml, re2js) is a chunk cold init loads only when ROUTING_FILE is set.
  it('reads a routing file at cold start: routes by a regex matcher, and fails the init on a bad file naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lambda-routing-'));
    const good = join(dir, 'routing.yml');
    writeFileSync(
      good,
      [
        'channels:',
        '  qwen:',
        '    type: slack',
        '    webhookUrl: { secret: QWEN_SLACK_URL }',
        'routes:',
        `  - matchers: ['model_name=~"qwen3-.*"']`,
        '    channels: [qwen]',
        'default:',
        '  channels: [slack]',
        '',
      ].join('\n'),
    );
    const bad = join(dir, 'bad.yml');
    writeFileSync(
      bad,
      [
        'routes:',
        '  - matchers: [\'model_name=~"(?<=x)"\']',
        '    channels: [slack]',
        'default:',
        '  channels: [slack]',
        '',
      ].join('\n'),
    );
    try {
      const env = { WEBHOOK_TOKEN: TOKEN, QWEN_SLACK_URL: `${slack.url}/services/T000/B000/qwen` };
      // An alert of its own: the same table saw the fixture's in the tests above (a duplicate sends nothing).
      const message = JSON.parse(fixtureText('firing-kv-cache-critical'));
      message.alerts[0].fingerprint = 'f00dfacef00dface';
      message.groupKey = '{}:{alertname="routing-file"}';
      const { results } = await invoke({ ...env, ROUTING_FILE: good }, [
        urlEvent(JSON.stringify(message), { authorization: `Bearer ${TOKEN}` }),
      ]);
      expect(results[0]).toMatchObject({ statusCode: 200 });
      expect(slack.requests.map((r) => r.path)).toEqual(['/services/T000/B000/qwen']);
      await expect(invoke({ ...env, ROUTING_FILE: bad }, [])).rejects.toThrow(
        /ROUTING_FILE: .*bad\.yml:2: routes\[0\]\.matchers/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('the routing variant: reads the routing.yml of its asset, with the secrets it names from the settings secret', async () => {
    const routed = deployedFunction('routing', 'Receiver/Function');
    const env = templateEnvironment(routed, deployed('routing').template.Resources);
    expect(env.ROUTING_FILE).toBe('/var/task/routing.yml');
    const feishu = await startFeishuPlatform({ secret: 'qwen-signing-secret' });
    const named = await startSecretsManager({
      [env.SETTINGS_SECRET_ARN!]: {
        WEBHOOK_TOKEN: TOKEN,
        SLACK_PLATFORM_WEBHOOK_URL: `${slack.url}/services/T000/B000/platform`,
        SLACK_GPU_INFRA_WEBHOOK_URL: `${slack.url}/services/T000/B000/gpu`,
        FEISHU_QWEN_WEBHOOK_URL: feishu.url,
        FEISHU_QWEN_SIGNING_SECRET: 'qwen-signing-secret',
      },
    });
    try {
      // A Qwen model's GPU memory: the Qwen team's Feishu (continue: true), then the hardware team's Slack.
      const message = JSON.parse(fixtureText('firing-kv-cache-critical'));
      message.groupKey = '{}:{alertname="routed"}';
      Object.assign(message.alerts[0], { fingerprint: 'a0e7ed0000000001' });
      Object.assign(message.alerts[0].labels, { model_name: 'qwen3-8b', kind: 'gpu_memory', severity: 'warning' });
      const { results } = await invokeDeployed(
        routed,
        [urlEvent(JSON.stringify(message), { authorization: `Bearer ${TOKEN}` })],
        {
          endpoints: { dynamodb: db.endpoint, secretsManager: named.endpoint, sns: sns.endpoint },
          env: { TABLE_NAME: TABLE, NODE_V8_COVERAGE: coverage.dir },
        },
      );
      expect(results[0]).toMatchObject({ statusCode: 200 });
      expect(slack.requests.map((r) => r.path)).toEqual(['/services/T000/B000/gpu']);
      expect(feishu.accepted).toHaveLength(1);
    } finally {
      await Promise.allSettled([feishu.close(), named.close()]);
    }
  }, 60_000);

  it('loaded and called the chunk it answers for (the routing file reader)', () => {
    expectClaimedChunksRan(coverage, 'lambda-bundle.test.ts');
  });
});
