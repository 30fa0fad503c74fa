/**
 * DingTalk (钉钉) through a group's custom robot: one `markdown` message per notification (`robot-markdown.ts`:
 * the headline, the Acknowledge link, each alert's lines and links), Chinese by default, optionally signed
 * (安全设置 加签), carrying the robot's keyword (安全设置 自定义关键词), @-mentioning the configured people
 * (`at.atMobiles`, `at.atUserIds`, `at.isAtAll`, each also written `@…` in the text, which DingTalk needs
 * to highlight them), and paced to 20 messages a minute (`pacing.ts`: above it DingTalk stops the robot
 * for 10 minutes).
 *
 * DingTalk answers HTTP 200 with `errcode`; the codes below are classified in {@link DINGTALK_ERRCODES}.
 * @see https://open.dingtalk.com/document/orgapp/custom-robot-access
 * @see https://open.dingtalk.com/document/orgapp/customize-robot-security-settings (加签: `timestamp`, `sign`)
 * @see https://open.dingtalk.com/document/orgapp/custom-bot-send-message-type (markdown, `at`)
 */
import { createHmac } from 'node:crypto';
import type { Secret } from '../../core/secret.js';
import type { RenderOptions } from '../../render/digest.js';
import type { Notification } from '../../render/notification.js';
import type { Channel } from '../channel.js';
import { checkErrcodeReply, errcodeRateLimited, type ErrcodeTable } from '../errcode.js';
import { postJson } from '../http.js';
import { mentionsToShow, type Mention } from '../mentions.js';
import { createPacer, type Pacer } from '../pacing.js';
import { renderRobotMarkdown } from '../robot-markdown.js';
// The same rule as a Feishu custom bot's keyword security: the keyword first in a title that lacks it.
import { withKeyword } from '../feishu/keyword.js';

/**
 * Most bytes of the markdown `text`. DingTalk refuses a message over about 20,000 bytes; this keeps
 * the whole JSON body (title, `at` lists, escapes) under it.
 */
export const DINGTALK_MAX_TEXT_BYTES = 18_000;
/** Messages a robot may send a minute; above it DingTalk stops it for {@link DINGTALK_BAN_MS}. */
export const DINGTALK_MESSAGES_PER_MINUTE = 20;
/** How long DingTalk stops a robot that sent too many, milliseconds. */
export const DINGTALK_BAN_MS = 10 * 60_000;
/** Longest wait for a free slot before a send gives up (retryable), milliseconds: within an attempt's time-out. */
const MAX_PACING_WAIT_MS = 5_000;

/**
 * DingTalk's reply codes.
 * - 130101 (`send too fast, exceed 20 times per minute`), 410100 (发送速度太快而限流): the robot is stopped for 10 minutes;
 *   90030 (`webhook over limit`): the tenant's monthly quota of robot messages;
 * - -1 (系统繁忙): DingTalk's own trouble;
 * - 310000: a security setting refused the message (`keywords not in content`, `sign not match`,
 *   `invalid timestamp`, `ip … not in whitelist`); 300001, 400101, 400106: no such robot (the webhook's
 *   `access_token`); 400102: the robot is disabled; 400013: the group was dissolved;
 * - 430101–430104: the content was judged unsafe (a link, text or image); 400105: a message type it does not take.
 * @see https://open.dingtalk.com/document/orgapp/custom-robot-access (错误码)
 */
export const DINGTALK_ERRCODES: ErrcodeTable = {
  rateLimited: new Map([
    [130101, DINGTALK_BAN_MS],
    [410100, DINGTALK_BAN_MS],
    [90030, undefined],
  ]),
  transient: new Set([-1]),
  configuration: new Map([
    [
      310000,
      "a security setting of the robot refused the message: its signing secret (DINGTALK_SECRET or the instance's signingSecret), its keyword (DINGTALK_KEYWORD or the instance's keyword), this host's clock (timestamps within 1 hour) or its IP allowlist",
    ],
    [300001, 'no such robot: check the webhook URL (its access_token)'],
    [400101, 'no such robot: check the webhook URL (its access_token)'],
    [400106, 'no such robot: check the webhook URL (its access_token)'],
    [400102, 'the robot is disabled: turn it on in the group settings'],
    [400013, 'the group was dissolved'],
  ]),
  content: new Set([430101, 430102, 430103, 430104, 400105]),
};

/** The robot's `at` object. */
export interface DingTalkAt {
  atMobiles?: string[];
  atUserIds?: string[];
  isAtAll?: boolean;
}

/** The body DingTalk's robot receives. */
export interface DingTalkMessage {
  msgtype: 'markdown';
  markdown: { title: string; text: string };
  at?: DingTalkAt;
}

/** What the text and the `at` object say of the mentions: `@<mobile>` and `@<userId>` are highlighted when also in `at`. */
function mentionParts(mentions: Mention[]): { lead?: string; at?: DingTalkAt } {
  const atMobiles = mentions.flatMap((m) => (m.kind === 'mobile' ? [m.mobile] : []));
  const atUserIds = mentions.flatMap((m) => (m.kind === 'dingtalk-user' ? [m.id] : []));
  const isAtAll = mentions.some((m) => m.kind === 'all');
  if (!atMobiles.length && !atUserIds.length && !isAtAll) return {};
  const lead = [...atMobiles, ...atUserIds].map((id) => `@${id}`).join(' ');
  return {
    ...(lead && { lead }),
    at: { ...(atMobiles.length && { atMobiles }), ...(atUserIds.length && { atUserIds }), ...(isAtAll && { isAtAll }) },
  };
}

/**
 * The markdown message, unsigned.
 * @param options.locale default `zh-CN`
 * @param options.keyword the robot's keyword: in the title (and so in the text's heading)
 * @param options.mentions who it @-mentions (entries checked by `mentions.ts`)
 */
export function renderDingTalk(
  notification: Notification,
  options: RenderOptions & { keyword?: string; mentions?: Mention[] } = {},
): DingTalkMessage {
  const locale = options.locale ?? 'zh-CN';
  const { lead, at } = mentionParts(options.mentions ?? []);
  const { title, text } = renderRobotMarkdown(notification, {
    locale,
    digestAbove: options.digestAbove,
    maxBytes: DINGTALK_MAX_TEXT_BYTES,
    lineBreak: '\n\n',
    lead,
    titled: (t) => withKeyword(t, options.keyword, locale),
  });
  return { msgtype: 'markdown', markdown: { title, text }, ...(at && { at }) };
}

/**
 * DingTalk's signature (加签): base64 of HMAC-SHA256 keyed with the secret over `timestamp + "\n" + secret`.
 * The caller URL-encodes it into the query.
 * @param timestampMs epoch milliseconds, the same value sent as `timestamp` (DingTalk accepts it within 1 hour)
 */
export function dingTalkSign(secret: string, timestampMs: number): string {
  return createHmac('sha256', secret).update(`${timestampMs}\n${secret}`, 'utf8').digest('base64');
}

/** The webhook URL with `timestamp` and `sign` added (URL-encoded) when the robot is signed. */
export function signedDingTalkUrl(webhookUrl: string, secret: string | undefined, timestampMs: number): string {
  if (!secret) return webhookUrl;
  const url = new URL(webhookUrl);
  url.searchParams.set('timestamp', String(timestampMs));
  url.searchParams.set('sign', dingTalkSign(secret, timestampMs));
  return url.toString();
}

export interface DingTalkChannelOptions extends RenderOptions {
  /** The robot's webhook URL (`https://oapi.dingtalk.com/robot/send?access_token=…`; its token is the credential). */
  webhookUrl: Secret;
  /** The robot's signing secret (`SEC…`), when its security setting is 加签. */
  secret?: Secret;
  /** The robot's keyword, when its security setting is 自定义关键词. */
  keyword?: string;
  /** The instance's `mention` entries. */
  mention?: string[];
  /** The instance name recorded in the ledger; default `dingtalk`. */
  name?: string;
  /** Clock for the signature's timestamp and the pacing. */
  now?: () => Date;
  /** The pacing of this robot (tests inject one with a clock); default 20 a minute. */
  pacer?: Pacer;
}

/**
 * The DingTalk channel.
 * @throws (from `send`) DeliveryError as {@link DINGTALK_ERRCODES} classifies, and the pacing's retryable one
 */
export function createDingTalkChannel(options: DingTalkChannelOptions): Channel {
  const name = options.name ?? 'dingtalk';
  const now = options.now ?? (() => new Date());
  const locale = options.locale ?? 'zh-CN';
  const pacer =
    options.pacer ??
    createPacer({
      perWindow: DINGTALK_MESSAGES_PER_MINUTE,
      maxWaitMs: MAX_PACING_WAIT_MS,
      now: () => now().getTime(),
    });
  return {
    name,
    locale,
    async send(notification, signal) {
      const body = renderDingTalk(notification, {
        locale,
        digestAbove: options.digestAbove,
        keyword: options.keyword,
        mentions: mentionsToShow(notification, 'dingtalk', options.mention),
      });
      await pacer.take(name, signal);
      // Built per request (the timestamp), passed to the request only: never logged, never in an error.
      const url = signedDingTalkUrl(options.webhookUrl.reveal(), options.secret?.reveal(), now().getTime());
      const reply = await postJson(
        { channel: name, url, rateLimited: errcodeRateLimited(DINGTALK_ERRCODES) },
        body,
        signal,
      );
      checkErrcodeReply(name, reply.body, DINGTALK_ERRCODES);
    },
  };
}
