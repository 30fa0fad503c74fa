/**
 * WeCom (企业微信) through a group robot: one `markdown` message per notification (`robot-markdown.ts`: the
 * headline, the Acknowledge link, each alert's lines and links), Chinese by default, at most
 * {@link WECOM_MAX_CONTENT_BYTES} bytes, @-mentioning the configured user ids (`<@userid>` in the text, the
 * only mention WeCom's markdown renders), and paced to 20 messages a minute (`pacing.ts`). The webhook URL's
 * `key` is the credential; WeCom robots have no signature.
 *
 * WeCom answers HTTP 200 with `errcode`; the codes below are classified in {@link WECOM_ERRCODES}.
 * @see https://developer.work.weixin.qq.com/document/path/91770 (群机器人配置说明)
 * @see https://developer.work.weixin.qq.com/document/path/90313 (全局错误码)
 */
import type { Secret } from '../../core/secret.js';
import type { RenderOptions } from '../../render/digest.js';
import type { Notification } from '../../render/notification.js';
import type { Channel } from '../channel.js';
import { checkErrcodeReply, errcodeRateLimited, type ErrcodeTable } from '../errcode.js';
import { postJson } from '../http.js';
import { mentionsToShow, type Mention } from '../mentions.js';
import { createPacer, RATE_WINDOW_MS, type Pacer } from '../pacing.js';
import { renderRobotMarkdown } from '../robot-markdown.js';

/** `markdown.content`, UTF-8 bytes. @see https://developer.work.weixin.qq.com/document/path/91770 (markdown类型) */
export const WECOM_MAX_CONTENT_BYTES = 4096;
/** Messages a robot may send a minute. @see https://developer.work.weixin.qq.com/document/path/91770 (消息发送频率限制) */
export const WECOM_MESSAGES_PER_MINUTE = 20;
/** Longest wait for a free slot before a send gives up (retryable), milliseconds: within an attempt's time-out. */
const MAX_PACING_WAIT_MS = 5_000;

/**
 * WeCom's reply codes.
 * - 45009 (`api freq out of limit`): too many messages this minute;
 * - -1 (系统繁忙): WeCom's own trouble;
 * - 93000 (`invalid webhook url`): no robot has this `key`;
 * - 40058 (`markdown.content exceed max length 4096`), 44004 (empty content), 40008 (`msgtype`): the content.
 */
export const WECOM_ERRCODES: ErrcodeTable = {
  rateLimited: new Map([[45009, RATE_WINDOW_MS]]),
  transient: new Set([-1]),
  configuration: new Map([[93000, 'no such robot: check the webhook URL (its key)']]),
  content: new Set([40058, 44004, 40008]),
};

/** The body WeCom's group robot receives. */
export interface WeComMessage {
  msgtype: 'markdown';
  markdown: { content: string };
}

/**
 * The markdown message.
 * @param options.locale default `zh-CN`
 * @param options.mentions who it @-mentions (`wecom:` entries; checked by `mentions.ts`)
 */
export function renderWeCom(
  notification: Notification,
  options: RenderOptions & { mentions?: Mention[] } = {},
): WeComMessage {
  const ids = (options.mentions ?? []).flatMap((m) => (m.kind === 'wecom-user' ? [`<@${m.id}>`] : []));
  const { text } = renderRobotMarkdown(notification, {
    locale: options.locale ?? 'zh-CN',
    digestAbove: options.digestAbove,
    maxBytes: WECOM_MAX_CONTENT_BYTES,
    lineBreak: '\n',
    ...(ids.length && { lead: ids.join(' ') }),
  });
  return { msgtype: 'markdown', markdown: { content: text } };
}

export interface WeComChannelOptions extends RenderOptions {
  /** The robot's webhook URL (`https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=…`; its key is the credential). */
  webhookUrl: Secret;
  /** The instance's `mention` entries. */
  mention?: string[];
  /** The instance name recorded in the ledger; default `wecom`. */
  name?: string;
  /** Clock for the pacing. */
  now?: () => Date;
  /** The pacing of this robot (tests inject one with a clock); default 20 a minute. */
  pacer?: Pacer;
}

/**
 * The WeCom channel.
 * @throws (from `send`) DeliveryError as {@link WECOM_ERRCODES} classifies, and the pacing's retryable one
 */
export function createWeComChannel(options: WeComChannelOptions): Channel {
  const name = options.name ?? 'wecom';
  const locale = options.locale ?? 'zh-CN';
  const now = options.now ?? (() => new Date());
  const pacer =
    options.pacer ??
    createPacer({ perWindow: WECOM_MESSAGES_PER_MINUTE, maxWaitMs: MAX_PACING_WAIT_MS, now: () => now().getTime() });
  return {
    name,
    locale,
    async send(notification, signal) {
      const body = renderWeCom(notification, {
        locale,
        digestAbove: options.digestAbove,
        mentions: mentionsToShow(notification, 'wecom', options.mention),
      });
      await pacer.take(name, signal);
      const reply = await postJson(
        { channel: name, url: options.webhookUrl, rateLimited: errcodeRateLimited(WECOM_ERRCODES) },
        body,
        signal,
      );
      checkErrcodeReply(name, reply.body, WECOM_ERRCODES);
    },
  };
}
