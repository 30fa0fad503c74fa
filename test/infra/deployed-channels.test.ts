/**
 * The receiver as deployed, with every channel type: the default variant's `Receiver/Function` asset
 * cold-started as Lambda runs it, its settings in the settings secret (a Secrets Manager stand-in at
 * the ARN the template names), one Alertmanager webhook through the Function URL event, against
 * dynalite and loopback platforms that check each wire format: Slack incoming webhook, the Slack app
 * (Web API `chat.postMessage`), Feishu (signed card), DingTalk (signed markdown), WeCom (markdown), SNS
 * `Publish` to the stack's topic, PagerDuty Events API v2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { functionUrlEvent } from '../../scripts/lambda-local.js';
import { fixtureText } from '../helpers/fixtures.js';
import { startFakeSlackApi, SLACK_CHANNEL_ID, type FakeSlackApi } from '../helpers/slack-api.js';
import {
  startFeishuPlatform,
  startPagerDutyPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type FeishuPlatform,
  type PagerDutyPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from '../integration/channels/platforms.js';
import {
  startDingTalkPlatform,
  startWeComPlatform,
  type DingTalkBody,
  type RobotPlatform,
  type WeComBody,
} from '../integration/channels/robot-platforms.js';
import { startSecretsManager, type SecretsManagerStandIn } from './assembly/aws-stand-ins.js';
import { chunkCoverage } from './assembly/chunks.js';
import { expectClaimedChunksRan } from './assembly/claims.js';
import { deployed, deployedFunction } from './assembly/deployed.js';
import { invokeDeployed, templateEnvironment } from './assembly/invoke.js';

const TOKEN = 'deployed-channels-token-0123456789abcdef';
const FEISHU_SECRET = 'feishu-signing-secret-0123';
const ROUTING_KEY = 'R0123456789abcdef0123456789abcde';
const DINGTALK_SECRET = 'SECdeployed-dingtalk-secret-0123456789';

describe('the deployed receiver delivers to every channel type', () => {
  const receiver = deployedFunction('default', 'Receiver/Function');
  const env = templateEnvironment(receiver, deployed('default').template.Resources);
  const coverage = chunkCoverage(receiver);
  let db: LocalDynamoDb;
  let secrets: SecretsManagerStandIn;
  let slack: SlackPlatform;
  let slackApi: FakeSlackApi;
  let feishu: FeishuPlatform;
  let sns: SnsPlatform;
  let pagerduty: PagerDutyPlatform;
  let dingtalk: RobotPlatform<DingTalkBody>;
  let wecom: RobotPlatform<WeComBody>;

  let tables = 0;

  beforeAll(async () => {
    [db, slack, slackApi, feishu, sns, pagerduty, dingtalk, wecom] = await Promise.all([
      startLocalDynamoDb(env.TABLE_NAME!),
      startSlackPlatform(),
      startFakeSlackApi(),
      startFeishuPlatform({ secret: FEISHU_SECRET }),
      startSnsPlatform(),
      startPagerDutyPlatform(),
      startDingTalkPlatform({ secret: DINGTALK_SECRET, keyword: '告警' }),
      startWeComPlatform(),
    ]);
  });
  afterAll(async () => {
    await Promise.allSettled(
      [db, secrets, slack, slackApi, feishu, sns, pagerduty, dingtalk, wecom].map((s) => s?.close()),
    );
  });

  /**
   * One cold start with `settings` in the settings secret (and `plain` as plain variables, as context
   * sets them), on a table of its own; one webhook through the Function URL.
   */
  async function deliver(settings: Record<string, string>, plain: Record<string, string> = {}) {
    await secrets?.close();
    secrets = await startSecretsManager({ [env.SETTINGS_SECRET_ARN!]: { WEBHOOK_TOKEN: TOKEN, ...settings } });
    sns.delivered.length = 0;
    const table = `channels-${++tables}`;
    await ensureTable(db.client, table);
    const { results, lines } = await invokeDeployed(
      receiver,
      [functionUrlEvent(fixtureText('firing-kv-cache-critical'), { authorization: `Bearer ${TOKEN}` })],
      {
        endpoints: { dynamodb: db.endpoint, sns: sns.endpoint, secretsManager: secrets.endpoint },
        env: { ...plain, TABLE_NAME: table, NODE_V8_COVERAGE: coverage.dir },
      },
    );
    expect(results[0], JSON.stringify(lines.filter((l) => l.level === 'error'))).toMatchObject({ statusCode: 200 });
    expect(secrets.server.requests).toHaveLength(1);
    return JSON.parse(results[0].body);
  }

  it('Slack incoming webhook (SLACK_WEBHOOK_URL): blocks and text', async () => {
    await deliver({ SLACK_WEBHOOK_URL: slack.url });
    expect(slack.accepted).toHaveLength(1);
    expect(slack.accepted[0]!.text).toContain('KV cache');
    expect(slack.accepted[0]!.blocks.length).toBeGreaterThan(0);
  }, 60_000);

  it('the Slack app (SLACK_BOT_TOKEN, -c slackChannel): chat.postMessage with the bot token', async () => {
    // The Web API client is a chunk of its own, loaded on the first post.
    await deliver(
      { SLACK_BOT_TOKEN: 'xoxb-0000000000-deployed-asset' },
      { SLACK_CHANNEL: SLACK_CHANNEL_ID, SLACK_API_URL: slackApi.url },
    );
    const [post, ...more] = slackApi.calls();
    expect(more).toEqual([]);
    expect(post).toMatchObject({
      method: 'chat.postMessage',
      authorization: 'Bearer xoxb-0000000000-deployed-asset',
      form: expect.objectContaining({ channel: SLACK_CHANNEL_ID }),
    });
    expect(post!.blocks.length).toBeGreaterThan(0);
  }, 60_000);

  it('Feishu (FEISHU_WEBHOOK_URL, FEISHU_SECRET): a signed interactive card', async () => {
    await deliver({ FEISHU_WEBHOOK_URL: feishu.url, FEISHU_SECRET });
    expect(feishu.accepted).toHaveLength(1);
    expect(feishu.accepted[0]!.card.header.title.content).toMatch(/KV/);
  }, 60_000);

  it("DingTalk (DINGTALK_WEBHOOK_URL, DINGTALK_SECRET): a signed markdown message the robot's keyword 告警 passes", async () => {
    await deliver({ DINGTALK_WEBHOOK_URL: dingtalk.url, DINGTALK_SECRET });
    expect(dingtalk.accepted).toHaveLength(1);
    expect(dingtalk.accepted[0]!.markdown.title).toMatch(/告警.*VLLMKVCacheNearlyFull/);
    expect(dingtalk.server.requests[0]!.path).toMatch(/&timestamp=\d{13}&sign=/);
  }, 60_000);

  it('WeCom (WECOM_WEBHOOK_URL): a markdown message', async () => {
    await deliver({ WECOM_WEBHOOK_URL: wecom.url });
    expect(wecom.accepted).toHaveLength(1);
    expect(wecom.accepted[0]!.markdown.content).toMatch(/^### 🔥 告警 · critical · VLLMKVCacheNearlyFull/);
  }, 60_000);

  it("SNS: Publish to the stack's alert topic (SNS_TOPIC_ARN from the template)", async () => {
    await deliver({});
    expect(sns.delivered).toHaveLength(1);
    expect(sns.delivered[0]!.TopicArn).toBe(env.SNS_TOPIC_ARN);
    expect(sns.delivered[0]!.Subject).toMatch(/KV/);
  }, 60_000);

  it('PagerDuty (PAGERDUTY_ROUTING_KEY): a trigger event, the sender a chunk loaded at cold start', async () => {
    await deliver({ PAGERDUTY_ROUTING_KEY: ROUTING_KEY }, { PAGERDUTY_EVENTS_URL: pagerduty.url });
    expect(pagerduty.accepted).toEqual([
      expect.objectContaining({ routing_key: ROUTING_KEY, event_action: 'trigger', dedup_key: expect.any(String) }),
    ]);
  }, 60_000);

  it('loaded and called the chunks it answers for (the Slack Web API client, the PagerDuty sender)', () => {
    expectClaimedChunksRan(coverage, 'deployed-channels.test.ts');
  });
});
