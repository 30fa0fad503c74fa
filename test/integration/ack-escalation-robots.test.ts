/**
 * Escalation to the chat group robots: `ESCALATION_FEISHU_WEBHOOK_URL`, `ESCALATION_DINGTALK_WEBHOOK_URL`
 * (signed) and `ESCALATION_WECOM_WEBHOOK_URL` are escalation targets like a second Slack webhook: an
 * unacknowledged critical alert reaches each once, in Chinese, with an Acknowledge link of its own, through
 * loopback robots that check each wire format (signature, keyword).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAckToken } from '../../shared/ack/token.js';
import { Secret } from '../../shared/core/secret.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { pollUntil } from '../helpers/processes.js';
import { startFeishuPlatform, type FeishuPlatform } from './channels/platforms.js';
import {
  startDingTalkPlatform,
  startWeComPlatform,
  type DingTalkBody,
  type RobotPlatform,
  type WeComBody,
} from './channels/robot-platforms.js';
import { ACK_SECRET, ackHarness } from './ack-harness.js';

const FP = '936e109b8c52c001';
const DINGTALK_SECRET = 'SECescalation-dingtalk-0123456789';
const FEISHU_SECRET = 'escalation-feishu-sign';
let db: LocalDynamoDb;
let dingtalk: RobotPlatform<DingTalkBody>;
let wecom: RobotPlatform<WeComBody>;
let feishu: FeishuPlatform;

beforeAll(async () => {
  [db, dingtalk, wecom, feishu] = await Promise.all([
    startLocalDynamoDb('ack-escalation-robots'),
    startDingTalkPlatform({ secret: DINGTALK_SECRET, keyword: '升级' }),
    startWeComPlatform(),
    startFeishuPlatform({ secret: FEISHU_SECRET, keyword: '升级' }),
  ]);
});
afterAll(async () => Promise.all([db, dingtalk, wecom, feishu].map((s) => s.close())));

const tokenOf = (text: string) => /\/v1\/ack\/([A-Za-z0-9_.-]+)/.exec(text)?.[1];

describe('escalation to Feishu, DingTalk and WeCom robots', () => {
  it('sends an unacknowledged critical alert to each once, in Chinese, each with its own Acknowledge link', async () => {
    const h = await ackHarness(db, {
      ESCALATION_FEISHU_WEBHOOK_URL: feishu.url,
      ESCALATION_FEISHU_SECRET: FEISHU_SECRET,
      ESCALATION_FEISHU_KEYWORD: '升级',
      ESCALATION_DINGTALK_WEBHOOK_URL: dingtalk.url,
      ESCALATION_DINGTALK_SECRET: DINGTALK_SECRET,
      ESCALATION_DINGTALK_KEYWORD: '升级',
      ESCALATION_WECOM_WEBHOOK_URL: wecom.url,
      ESCALATION_DELAY_SECONDS: '0.2',
    });
    await h.webhook(fixture('firing-kv-cache-critical'));
    const targets = ['escalation-feishu', 'escalation-dingtalk', 'escalation-wecom'];
    const carried = async () =>
      ((await (await h.audit(FP)).json()) as { record: { channels: string[] } }).record.channels;
    await pollUntil(
      async () => {
        const channels = await carried();
        return targets.every((t) => channels.includes(t)) ? true : undefined;
      },
      () =>
        `not escalated to every robot: ${feishu.accepted.length} ${dingtalk.accepted.length} ${wecom.accepted.length}`,
      { deadlineMs: 15_000, intervalMs: 50 },
    );
    expect([feishu.accepted.length, dingtalk.accepted.length, wecom.accepted.length]).toEqual([1, 1, 1]);
    const texts = {
      'escalation-feishu': JSON.stringify(feishu.accepted[0]),
      'escalation-dingtalk': dingtalk.accepted[0]!.markdown.text,
      'escalation-wecom': wecom.accepted[0]!.markdown.content,
    };
    for (const [target, text] of Object.entries(texts)) {
      expect(text, target).toMatch(/🚨 无人认领/);
      const token = tokenOf(text);
      expect(verifyAckToken(token!, { current: new Secret(ACK_SECRET) }, h.now()), target).toMatchObject({
        fingerprints: [FP],
        channel: target,
        locale: 'zh-CN',
      });
    }
  });
});
