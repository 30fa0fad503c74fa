/**
 * What the Slack-app channel posts: the incoming-webhook rendering (`renderSlack`), with the
 * Acknowledge link button turned into an interactive button (Slack sends the click to
 * `POST /v1/slack/interactions`) beside the page link (the fallback, and the way to silence), and a
 * state line under the header that `chat.update` rewrites as the group moves on.
 * @see https://api.slack.com/reference/block-kit/block-elements#button
 * @see https://api.slack.com/methods/chat.update
 */
import type { Locale } from '../../render/locale.js';
import type { Notification } from '../../render/notification.js';
import type { RenderOptions } from '../../render/digest.js';
import { escapeMrkdwn, renderSlack, SLACK_MAX_BLOCKS, SLACK_MAX_TEXT_CHARS, type SlackBlock } from './index.js';
import type { SlackThread, StoredSlackContent } from '../../store/slack-threads.js';
import type { SlackContent } from './web-api.js';
import { stateLine as threadStateLine } from '../threads.js';

/** `action_id` of the interactive Acknowledge button; its `value` is the signed link's token. */
export const ACK_ACTION_ID = 'acknowledge';
/** `action_id` of the page link button (Slack reports its clicks too; they change nothing). */
export const ACK_PAGE_ACTION_ID = 'acknowledge_page';
/** A button's `value`, characters. @see https://api.slack.com/reference/block-kit/block-elements#button */
export const SLACK_MAX_BUTTON_VALUE_CHARS = 2000;

type Button = {
  type: 'button';
  text: { type: 'plain_text'; text: string; emoji: true };
  action_id: string;
  style?: 'primary';
  url?: string;
  value?: string;
};
type Actions = { type: 'actions'; elements: Button[] };

/** The top-level message of a new thread (state line added by {@link withState}). */
export function renderAppMessage(notification: Notification, options: RenderOptions): SlackContent {
  const message = renderSlack(notification, options);
  return {
    text: message.text,
    blocks: message.blocks.map((b) => (b.type === 'actions' ? interactive(b as Actions, notification) : b)),
  };
}

/**
 * A reply in the thread: the ordinary rendering. Alerts that join the group (or are announced again)
 * keep their own interactive Acknowledge buttons: the top message's are for the alerts it announced,
 * and acknowledgement is per alert. Other replies (acknowledgement, escalation, resolve) have none.
 */
export function renderAppReply(notification: Notification, options: RenderOptions): SlackContent {
  const message = renderSlack(notification, options);
  const own = (notification.kind ?? 'alert') === 'alert' && notification.alerts.some((a) => a.status === 'firing');
  return {
    text: message.text,
    blocks: own
      ? message.blocks.map((b) => (b.type === 'actions' ? interactive(b as Actions, notification) : b))
      : message.blocks.filter((b) => b.type !== 'actions'),
  };
}

function interactive(block: Actions, notification: Notification): SlackBlock {
  const link = block.elements[0]!;
  const token = notification.acknowledgeUrl
    ? new URL(notification.acknowledgeUrl).pathname.split('/').pop()
    : undefined;
  const page: Button = { ...link, action_id: ACK_PAGE_ACTION_ID, text: { ...link.text, text: `${link.text.text} …` } };
  delete page.style;
  if (!token || token.length > SLACK_MAX_BUTTON_VALUE_CHARS) return block as SlackBlock;
  const button: Button = { type: 'button', text: link.text, action_id: ACK_ACTION_ID, style: 'primary', value: token };
  return { type: 'actions', elements: [button, page] } as unknown as SlackBlock;
}

/**
 * The state line: firing, acknowledged by whom (and how many are not yet), escalated, resolved when, in the
 * instance's language. English marks the state in bold; Chinese does not, since Slack's mrkdwn bolds only
 * between spaces or punctuation, which Chinese text runs without.
 */
export function stateLine(
  thread: Pick<
    SlackThread,
    'firing' | 'acknowledged' | 'acknowledgedBy' | 'acknowledgedAt' | 'escalatedAt' | 'resolvedAt'
  >,
  locale: Locale = 'en',
): string {
  return threadStateLine(thread, locale, {
    strong: locale === 'en' ? (t) => `*${t}*` : (t) => t,
    name: escapeMrkdwn,
  });
}

/**
 * The stored message with the thread's state: the state line as a context block under the header, and
 * the buttons removed once acknowledged or resolved (nothing left to acknowledge).
 * @param locale the instance's language (the state line's words)
 */
export function withState(content: StoredSlackContent, thread: SlackThread, locale: Locale = 'en'): SlackContent {
  const line = stateLine(thread, locale);
  const done = Boolean(thread.acknowledgedBy || thread.resolvedAt);
  // Stored blocks are what this renderer produced (the store keeps them as opaque JSON).
  const blocks = (content.blocks as SlackBlock[]).filter((b) => !(done && b.type === 'actions'));
  const at = blocks[0]?.type === 'header' ? 1 : 0;
  blocks.splice(at, 0, { type: 'context', elements: [{ type: 'mrkdwn', text: line, verbatim: true }] });
  // A full message gives up its last alert block before the final "+N more" section for the state line.
  while (blocks.length > SLACK_MAX_BLOCKS) blocks.splice(blocks.length - 2, 1);
  const text = `${line.replace(/\*/g, '')}\n${content.text}`.slice(0, SLACK_MAX_TEXT_CHARS);
  return { text, blocks };
}
