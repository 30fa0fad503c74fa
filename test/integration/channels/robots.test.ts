/**
 * The DingTalk and WeCom group-robot channels against loopback robots that check the exact wire format
 * (`robot-platforms.ts`): DingTalk's signature in the query, keyword security, `at` mentions, its
 * 20-a-minute limit and 10-minute stop; WeCom's key, its 4,096-byte markdown, its rate limit.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DeliveryError, type Channel } from '../../../shared/channels/channel.js';
import { createDingTalkChannel } from '../../../shared/channels/dingtalk/index.js';
import { createWeComChannel } from '../../../shared/channels/wecom/index.js';
import { Secret } from '../../../shared/core/secret.js';
import type { Notification } from '../../../shared/render/notification.js';
import { fixtureNotification, manyAlertsNotification } from '../../helpers/notifications.js';
import {
  DINGTALK_TOKEN,
  startDingTalkPlatform,
  startWeComPlatform,
  WECOM_KEY,
  type DingTalkBody,
  type RobotPlatform,
  type WeComBody,
} from './robot-platforms.js';

const SECRET = 'SEC0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcd';
const ACK_URL = 'https://ack.example.com/v1/ack/eyJwYXlsb2FkIjoxfQ.c2lnbmF0dXJl';
const send = (channel: Channel, n: Notification) => channel.send(n, AbortSignal.timeout(5000));
const firing = (): Notification => ({ ...fixtureNotification('firing-kv-cache-critical'), acknowledgeUrl: ACK_URL });
const failure = async (p: Promise<unknown>) => {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DeliveryError);
  return err as DeliveryError;
};
/** A shared clock the robot and the channel read, moved by hand. */
const clock = { ms: Date.parse('2026-11-30T12:00:00Z') };

describe('DingTalk custom robot', () => {
  let robot: RobotPlatform<DingTalkBody> & { bannedUntil: number };
  const channel = (options: { secret?: string; keyword?: string; mention?: string[] } = {}) =>
    createDingTalkChannel({
      webhookUrl: new Secret(robot.url),
      secret: new Secret(options.secret ?? SECRET),
      keyword: options.keyword,
      mention: options.mention,
      now: () => new Date(clock.ms),
    });

  beforeAll(async () => {
    robot = await startDingTalkPlatform({ secret: SECRET, keyword: '告警', now: () => clock.ms });
  });
  afterAll(() => robot.close());
  beforeEach(() => {
    clock.ms += 11 * 60_000;
    robot.accepted.length = 0;
    robot.server.requests.length = 0;
  });

  it('sends one signed markdown message in Chinese with the keyword and the @-mentions in text and `at`', async () => {
    await send(channel({ keyword: '告警', mention: ['mobile:13800001111', 'dingtalk:manager4220', '@all'] }), firing());
    expect(robot.accepted).toHaveLength(1);
    const [body] = robot.accepted;
    const path = robot.server.requests[0]!.path;
    expect(path).toMatch(new RegExp(`^/robot/send\\?access_token=${DINGTALK_TOKEN}&timestamp=${clock.ms}&sign=[^&]+$`));
    expect(body!.msgtype).toBe('markdown');
    expect(body!.markdown.title).toMatch(/^🔥 告警 · critical · VLLMKVCacheNearlyFull/);
    expect(body!.at).toEqual({ atMobiles: ['13800001111'], atUserIds: ['manager4220'], isAtAll: true });
    const text = body!.markdown.text;
    expect(text.split('\n\n').slice(0, 3)).toEqual([
      '@13800001111 @manager4220',
      `### ${body!.markdown.title}`,
      `**[认领](${ACK_URL})**`,
    ]);
    expect(text).toContain('KV cache 使用率');
    expect(text).toMatch(/\[Prometheus 图表\]\(http:\/\/prometheus\.example\.com:9090\/graph\?g0\.expr=/);
  });

  it('puts the keyword in the acknowledged and resolved messages too (keyword security refuses them otherwise)', async () => {
    const n = firing();
    const acked: Notification = {
      ...n,
      kind: 'acknowledged',
      alerts: n.alerts.map((a) => ({
        ...a,
        acknowledgement: { by: '张伟', at: '2026-11-30T12:05:00Z', channel: 'x' },
      })),
    };
    const resolved: Notification = {
      ...n,
      status: 'resolved',
      alerts: n.alerts.map((a) => ({ ...a, status: 'resolved', endsAt: '2026-11-30T12:30:00Z' })),
    };
    const c = channel({ keyword: '告警' });
    await expect(send(c, acked)).resolves.toBeUndefined();
    await expect(send(c, resolved)).resolves.toBeUndefined();
    expect(robot.accepted.map((b) => b.markdown.title)).toEqual([
      expect.stringMatching(/^【告警】👀 /),
      expect.stringMatching(/^【告警】✅ /),
    ]);
    // Nobody is @-mentioned on an acknowledgement or a resolve.
    expect(robot.accepted.every((b) => b.at === undefined)).toBe(true);
  });

  it('a wrong signing secret fails for good, naming the setting, never the secret or the token', async () => {
    const err = await failure(send(channel({ secret: 'SECwrong', keyword: '告警' }), firing()));
    expect(err.retryable).toBe(false);
    expect(err.reason).toBe('client_error');
    expect(err.message).toMatch(/errcode 310000: sign not match .*DINGTALK_SECRET/);
    expect(err.message).not.toContain('SECwrong');
    expect(err.message).not.toContain(DINGTALK_TOKEN);
  });

  it('a missing keyword is named (310000 keywords not in content)', async () => {
    const err = await failure(send(channel(), { ...firing(), status: 'resolved' }));
    expect(err.message).toMatch(/keywords not in content .*DINGTALK_KEYWORD/);
  });

  it('130101 (too fast) is retryable after the 10-minute stop', async () => {
    robot.rateLimit(1);
    const err = await failure(send(channel({ keyword: '告警' }), firing()));
    expect(err).toMatchObject({ retryable: true, reason: 'rate_limited', retryAfterMs: 600_000 });
  });

  it('paces to 20 messages a minute: the 21st waits for a slot instead of getting the robot stopped', async () => {
    const c = channel({ keyword: '告警' });
    for (let i = 0; i < 20; i++) await send(c, firing());
    // The window is full: the next slot is 60 s away, past the pacing's wait, so nothing is sent.
    const err = await failure(send(c, firing()));
    expect(err).toMatchObject({ retryable: true, reason: 'rate_limited', retryAfterMs: 60_000 });
    expect(robot.server.requests).toHaveLength(20);
    clock.ms += 60_000;
    await send(c, firing());
    expect(robot.accepted).toHaveLength(21);
    expect(robot.bannedUntil).toBeLessThan(clock.ms);
  });

  it('a storm of alerts stays within the text limit and is accepted', async () => {
    await send(channel({ keyword: '告警' }), manyAlertsNotification(400));
    expect(Buffer.byteLength(robot.accepted[0]!.markdown.text)).toBeLessThanOrEqual(18_000);
  });
});

describe('WeCom group robot', () => {
  let robot: RobotPlatform<WeComBody>;
  const channel = (options: { url?: string; mention?: string[] } = {}) =>
    createWeComChannel({
      webhookUrl: new Secret(options.url ?? robot.url),
      mention: options.mention,
      now: () => new Date(clock.ms),
    });

  beforeAll(async () => {
    robot = await startWeComPlatform({ now: () => clock.ms });
  });
  afterAll(() => robot.close());
  beforeEach(() => {
    clock.ms += 2 * 60_000;
    robot.accepted.length = 0;
    robot.server.requests.length = 0;
  });

  it('sends one markdown message in Chinese, @-mentioning the configured user ids', async () => {
    await send(channel({ mention: ['wecom:zhangsan', 'wecom:lisi'] }), firing());
    const content = robot.accepted[0]!.markdown.content;
    expect(robot.accepted[0]!.msgtype).toBe('markdown');
    expect(robot.server.requests[0]!.path).toBe(`/cgi-bin/webhook/send?key=${WECOM_KEY}`);
    expect(content.split('\n\n').slice(0, 3)).toEqual([
      '<@zhangsan> <@lisi>',
      expect.stringMatching(/^### 🔥 告警 · critical · VLLMKVCacheNearlyFull/),
      `**[认领](${ACK_URL})**`,
    ]);
    expect(content).toContain('KV cache 使用率');
  });

  it('keeps a group of many alerts within 4,096 bytes, saying how many are left out', async () => {
    await send(channel(), manyAlertsNotification(40));
    const content = robot.accepted[0]!.markdown.content;
    expect(Buffer.byteLength(content)).toBeLessThanOrEqual(4096);
    expect(content).toMatch(/另有 \d+ 条告警/);
  });

  it('an unknown key fails for good (93000), naming the webhook URL, never its key', async () => {
    const url = robot.url.replace(WECOM_KEY, 'ffffffff-0000-4000-8000-000000000000');
    const err = await failure(send(channel({ url }), firing()));
    expect(err).toMatchObject({ retryable: false, reason: 'client_error' });
    expect(err.message).toMatch(/errcode 93000: invalid webhook url .*webhook URL/);
    expect(err.message).not.toContain('ffffffff-0000');
  });

  it('45009 (too many) is retryable after a minute', async () => {
    robot.rateLimit(1);
    const err = await failure(send(channel(), firing()));
    expect(err).toMatchObject({ retryable: true, reason: 'rate_limited', retryAfterMs: 60_000 });
  });
});
