/**
 * Escalation to the receiver's channels, as deployed (the variant `-c routingFile=… -c escalationChannels=
 * oncall-pagerduty -c slackChannel=… -c settings='{"TIME_ZONE":"Asia/Shanghai"}'`): the escalation function's
 * own asset carries the routing file and builds the receiver's channels from it, so an unacknowledged critical
 * alert pages the routing file's PagerDuty instance (named only by `escalationChannels`) and is announced in
 * the Slack app's thread of the alert, besides the escalation topic; the times read in the zone context
 * `settings` gave both functions. Against dynalite and loopback platforms checking each wire format.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionUrlEvent } from '../../scripts/lambda-local.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';
import {
  startPagerDutyPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type PagerDutyPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from '../integration/channels/platforms.js';
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

const TOKEN = 'deployed-escalation-channels-token-0123456789';
const ACK_SECRET = 'deployed-escalation-channels-ack-secret-0123456789';
const BOT_TOKEN = 'xoxb-0000000000-escalation-channels';
const ONCALL_KEY = 'Roncall0123456789abcdef012345678';

describe('escalation to routing-file channels and the Slack app thread, as deployed', () => {
  const { template } = deployed('escalationChannels');
  const receiver = deployedFunction('escalationChannels', 'Receiver/Function');
  const check = deployedFunction('escalationChannels', 'Escalation/Function');
  const receiverEnv = templateEnvironment(receiver, template.Resources);
  const checkEnv = templateEnvironment(check, template.Resources);
  const checkCoverage = chunkCoverage(check);
  let db: LocalDynamoDb;
  let secrets: SecretsManagerStandIn;
  let scheduler: SchedulerStandIn;
  let sns: SnsPlatform;
  let teamSlack: SlackPlatform;
  let slackApi: FakeSlackApi;
  let pagerduty: PagerDutyPlatform;

  beforeAll(async () => {
    [db, sns, scheduler, teamSlack, slackApi, pagerduty] = await Promise.all([
      startLocalDynamoDb(receiverEnv.TABLE_NAME!),
      startSnsPlatform(),
      startScheduler(),
      startSlackPlatform(),
      startFakeSlackApi(),
      startPagerDutyPlatform(),
    ]);
    secrets = await startSecretsManager({
      [receiverEnv.SETTINGS_SECRET_ARN!]: {
        WEBHOOK_TOKEN: TOKEN,
        ACK_SECRET,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_TEAM_WEBHOOK_URL: teamSlack.url,
        PAGERDUTY_ONCALL_ROUTING_KEY: ONCALL_KEY,
      },
    });
  });
  afterAll(async () => {
    await Promise.allSettled([db, secrets, scheduler, sns, teamSlack, slackApi, pagerduty].map((s) => s?.close()));
  });

  const endpoints = () => ({
    dynamodb: db.endpoint,
    sns: sns.endpoint,
    secretsManager: secrets.endpoint,
    scheduler: scheduler.endpoint,
  });
  // The platforms' addresses, as the settings their tests give: the same for both functions.
  const platforms = () => ({ SLACK_API_URL: slackApi.url, PAGERDUTY_EVENTS_URL: pagerduty.url });

  it('the template gives the check the routing file, the channels it names and the context settings', () => {
    for (const env of [receiverEnv, checkEnv]) {
      expect(env).toMatchObject({
        ESCALATION_CHANNELS: 'oncall-pagerduty',
        SLACK_CHANNEL: 'C0ALERTS01',
        TIME_ZONE: 'Asia/Shanghai',
        ROUTING_FILE: '/var/task/routing.yml',
      });
    }
  });

  it('unacknowledged: PagerDuty pages on-call, the Slack app thread is told, the topic gets it', async () => {
    const { results } = await invokeDeployed(
      receiver,
      [functionUrlEvent(JSON.stringify(fixture('firing-kv-cache-critical')), { authorization: `Bearer ${TOKEN}` })],
      { endpoints: endpoints(), env: platforms() },
    );
    expect(results[0]).toMatchObject({ statusCode: 200 });
    // Routed: the webhook instance and the Slack app's channel; PagerDuty is only an escalation target.
    expect(teamSlack.accepted).toHaveLength(1);
    const [post, ...others] = slackApi.calls();
    expect(others).toEqual([]);
    expect(post).toMatchObject({ method: 'chat.postMessage', authorization: `Bearer ${BOT_TOKEN}` });
    expect(pagerduty.accepted).toEqual([]);
    const [schedule] = [...scheduler.schedules.values()];
    // The fake Web API's first `ts` (it counts from 1).
    const alertTs = '1764500000.000001';

    const published = sns.delivered.length;
    const { results: outcome, lines } = await invokeDeployed(check, [JSON.parse(schedule!.target.Input!)], {
      endpoints: endpoints(),
      env: { ...platforms(), NODE_V8_COVERAGE: checkCoverage.dir },
      contexts: [{ awsRequestId: 'sch-1' }],
    });
    expect(outcome, JSON.stringify(lines.filter((l) => l.level !== 'info'))).toEqual([{ outcome: 'escalated' }]);
    expect(pagerduty.accepted).toEqual([
      expect.objectContaining({ routing_key: ONCALL_KEY, event_action: 'trigger', dedup_key: expect.any(String) }),
    ]);
    expect(JSON.stringify(pagerduty.accepted[0])).toContain('VLLMKVCacheNearlyFull');
    // The alert's message says so in its state line, updated in place; the escalation is a reply in its thread.
    const [update, reply, ...more] = slackApi.calls().slice(1);
    expect(more).toEqual([]);
    expect(update).toMatchObject({ method: 'chat.update', form: expect.objectContaining({ ts: alertTs }) });
    expect(update!.form.text).toMatch(/Escalated at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d Asia\/Shanghai/);
    expect(reply).toMatchObject({ method: 'chat.postMessage', form: expect.objectContaining({ thread_ts: alertTs }) });
    expect(reply!.form.text).toMatch(/^🚨 UNACKNOWLEDGED · critical · VLLMKVCacheNearlyFull/);
    expect(sns.delivered.slice(published).map((p) => p.TopicArn)).toEqual([checkEnv.ESCALATION_SNS_TOPIC_ARN]);
    // The webhook instance keeps no thread: it is not told again.
    expect(teamSlack.accepted).toHaveLength(1);
  }, 90_000);

  it('loaded and called the chunks it answers for (the routing file reader, PagerDuty, the Slack Web API)', () => {
    expectClaimedChunksRan(checkCoverage, 'deployed-escalation-channels.test.ts');
  });
});
