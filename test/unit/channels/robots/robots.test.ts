/**
 * The DingTalk and WeCom group robots: DingTalk's signature against a vector computed elsewhere, the
 * pacing with an injected clock, their settings as `loadConfig` checks them at start (environment and
 * routing file, mentions of each platform's forms), and the secrets the settings secret may hold.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DeliveryError } from '../../../../shared/channels/channel.js';
import { dingTalkSign, signedDingTalkUrl } from '../../../../shared/channels/dingtalk/index.js';
import { createPacer } from '../../../../shared/channels/pacing.js';
import { buildChannels } from '../../../../shared/runtime/channels.js';
import { loadConfig } from '../../../../shared/runtime/config.js';
import { SECRET_SETTINGS } from '../../../../shared/runtime/settings-secret.js';
import { configProblems as problems, envChannel } from '../../../helpers/config.js';

const DINGTALK_URL = 'https://oapi.dingtalk.com/robot/send?access_token=0f1e2d3c4b5a6978';
const WECOM_URL = 'https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7a1b-4bc4-97a0-0ec2e1a5a111';
const SECRET = 'SEC0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd';
const dir = mkdtempSync(join(tmpdir(), 'robots-routing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("DingTalk's signature (加签)", () => {
  // Computed with Python's hmac/hashlib/base64 and urllib.parse.quote_plus, as DingTalk's docs show it.
  it('is base64 HMAC-SHA256 keyed with the secret over `timestamp\\nsecret`, URL-encoded in the query', () => {
    expect(dingTalkSign(SECRET, 1764504000000)).toBe('zC4HTtXCO833UnLlsjOo8GsHrcoJoLHhVaUqHALL1EM=');
    expect(signedDingTalkUrl(DINGTALK_URL, SECRET, 1764504000000)).toBe(
      `${DINGTALK_URL}&timestamp=1764504000000&sign=zC4HTtXCO833UnLlsjOo8GsHrcoJoLHhVaUqHALL1EM%3D`,
    );
    expect(signedDingTalkUrl(DINGTALK_URL, undefined, 1764504000000)).toBe(DINGTALK_URL);
  });
});

describe('pacing a robot to 20 messages a minute', () => {
  it('waits for the oldest send to leave the window when the wait is short, refuses (retryable) when long', async () => {
    let now = 0;
    const waits: number[] = [];
    const pacer = createPacer({
      perWindow: 2,
      maxWaitMs: 5000,
      now: () => now,
      sleep: async (ms) => {
        waits.push(ms);
        now += ms;
      },
    });
    const signal = new AbortController().signal;
    await pacer.take('r', signal);
    now = 57_000;
    await pacer.take('r', signal);
    now = 58_000;
    // Full: the first send leaves the window at 60 s, 2 s from now.
    await pacer.take('r', signal);
    expect(waits).toEqual([2000]);
    expect(now).toBe(60_000);
    // Full again (57 s and 60 s): the next slot is at 117 s, 57 s away.
    const err = await pacer.take('r', signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect(err).toMatchObject({ retryable: true, reason: 'rate_limited', retryAfterMs: 57_000 });
  });
});

describe('DingTalk and WeCom settings', () => {
  it('DINGTALK_WEBHOOK_URL, DINGTALK_SECRET, DINGTALK_KEYWORD and WECOM_WEBHOOK_URL turn the channels on, secrets redacted', () => {
    const config = loadConfig({
      DINGTALK_WEBHOOK_URL: DINGTALK_URL,
      DINGTALK_SECRET: SECRET,
      DINGTALK_KEYWORD: '告警',
      WECOM_WEBHOOK_URL: WECOM_URL,
    });
    expect(buildChannels(config).map((c) => [c.name, c.locale])).toEqual([
      ['dingtalk', 'zh-CN'],
      ['wecom', 'zh-CN'],
    ]);
    expect(envChannel(config, 'dingtalk')).toMatchObject({ keyword: '告警' });
    const printed = [JSON.stringify(config), inspect(config, { depth: 5 })].join('\n');
    for (const secret of [SECRET, '0f1e2d3c4b5a6978', '693a91f6-7a1b']) expect(printed).not.toContain(secret);
    expect(SECRET_SETTINGS).toEqual(
      expect.arrayContaining(['DINGTALK_WEBHOOK_URL', 'DINGTALK_SECRET', 'WECOM_WEBHOOK_URL']),
    );
  });

  it('names a bad setting without its value', () => {
    expect(problems({ DINGTALK_WEBHOOK_URL: 'http://oapi.dingtalk.com/robot/send?access_token=x' })).toEqual([
      'DINGTALK_WEBHOOK_URL: must be an https URL (http only to loopback)',
    ]);
    expect(problems({ DINGTALK_SECRET: SECRET })).toEqual(['DINGTALK_SECRET: set, but DINGTALK_WEBHOOK_URL is not']);
    expect(problems({ WECOM_WEBHOOK_URL: 'qyapi.weixin.qq.com' })).toEqual(['WECOM_WEBHOOK_URL: must be an https URL']);
  });

  it("a routing file declares instances; each platform's mention forms, others refused naming the forms", () => {
    const routing = join(dir, 'routing.yml');
    writeFileSync(
      routing,
      [
        'channels:',
        "  ops-ding: { type: dingtalk, webhookUrl: { secret: DING_OPS }, signingSecret: { secret: DING_OPS_SEC }, keyword: 告警, mention: ['mobile:13800001111', 'dingtalk:manager4220', '@all'] }",
        "  ops-wecom: { type: wecom, webhookUrl: { secret: WECOM_OPS }, mention: ['wecom:zhangsan'], locale: en }",
        'default: { channels: [ops-ding, ops-wecom] }',
      ].join('\n'),
    );
    const env = { ROUTING_FILE: routing, DING_OPS: DINGTALK_URL, DING_OPS_SEC: SECRET, WECOM_OPS: WECOM_URL };
    expect(buildChannels(loadConfig(env)).map((c) => [c.name, c.locale])).toEqual([
      ['ops-ding', 'zh-CN'],
      ['ops-wecom', 'en'],
    ]);
    writeFileSync(
      routing,
      [
        'channels:',
        "  d: { type: dingtalk, webhookUrl: { secret: DING_OPS }, mention: ['ou_7d8a6e6df7621556ce0d21922b676706ccs'] }",
        "  w: { type: wecom, webhookUrl: { secret: WECOM_OPS }, mention: ['mobile:13800001111', '@all'] }",
        'default: { channels: [d, w] }',
      ].join('\n'),
    );
    expect(problems(env)).toEqual([
      `ROUTING_FILE: ${routing}:2: channels.d.mention[0]: must be mobile:<phone number>, dingtalk:<userId> or @all`,
      `ROUTING_FILE: ${routing}:3: channels.w.mention[0]: must be wecom:<userid> (WeCom markdown mentions user ids only)`,
      `ROUTING_FILE: ${routing}:3: channels.w.mention[1]: must be wecom:<userid> (WeCom markdown mentions user ids only)`,
    ]);
  });
});
