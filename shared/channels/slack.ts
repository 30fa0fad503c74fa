/**
 * Slack through an incoming webhook: a Block Kit message with a header, one section and one
 * context (links) block per alert, and a `+N more alerts` section when the alerts do not fit.
 * @see https://api.slack.com/messaging/webhooks
 * @see https://api.slack.com/reference/block-kit/blocks
 */
import type { Notification } from '../notification.js';
import type { Secret } from '../secret.js';
import { truncate } from '../format.js';
import { alertLines, alertLinks, alertTitle, headline, headlineText, type Link, type Markup, moreAlertsText, truncateEscaped } from './content.js';
import { postJson } from './http.js';
import type { Channel } from './types.js';

/** Blocks per message. @see https://api.slack.com/reference/block-kit/blocks */
export const SLACK_MAX_BLOCKS = 50;
/** Header block text, characters. @see https://api.slack.com/reference/block-kit/blocks#header */
export const SLACK_MAX_HEADER_CHARS = 150;
/** Section text (and any text object), characters. @see https://api.slack.com/reference/block-kit/blocks#section */
export const SLACK_MAX_SECTION_CHARS = 3000;
/** Top-level `text`, characters; Slack truncates beyond it. @see https://api.slack.com/methods/chat.postMessage#truncating */
export const SLACK_MAX_TEXT_CHARS = 40_000;

/** A Block Kit block as this channel emits it (header, section, context). */
export type SlackBlock =
  | { type: 'header'; text: { type: 'plain_text'; text: string; emoji: true } }
  | { type: 'section'; text: { type: 'mrkdwn'; text: string } }
  | { type: 'context'; elements: { type: 'mrkdwn'; text: string }[] };

/** The incoming-webhook body. `text` is the notification fallback and is always present. */
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/**
 * Escapes Slack's three control characters in mrkdwn text.
 * @see https://api.slack.com/reference/surfaces/formatting#escaping
 */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const SLACK_MARKUP: Markup = { bold: (s) => `*${s}*`, italic: (s) => `_${s}_`, escape: escapeMrkdwn };

/** `<url|label>`, with the characters that would end the link percent-encoded. */
function slackLink(link: Link): string {
  const url = link.url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
  return `<${url}|${link.label}>`;
}

/** Links joined with ` · `, keeping only those that fit in one text object. */
function linksText(links: Link[]): string {
  let text = '';
  for (const link of links) {
    const next = text ? `${text} · ${slackLink(link)}` : slackLink(link);
    if (next.length <= SLACK_MAX_SECTION_CHARS) text = next;
  }
  return text;
}

function alertBlocks(notification: Notification, index: number): SlackBlock[] {
  const alert = notification.alerts[index]!;
  const section = truncateEscaped(alertLines(alert, SLACK_MARKUP).join('\n'), SLACK_MAX_SECTION_CHARS);
  const blocks: SlackBlock[] = [{ type: 'section', text: { type: 'mrkdwn', text: section } }];
  const links = linksText(alertLinks(alert, notification.externalURL));
  if (links) blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: links }] });
  return blocks;
}

/**
 * Renders the webhook body. Alerts are shown in order while they fit in {@link SLACK_MAX_BLOCKS}
 * (keeping one block for `+N more alerts`, which also counts alerts Alertmanager truncated);
 * every text is cut to its Slack limit.
 */
export function renderSlack(notification: Notification): SlackMessage {
  const head = headlineText(headline(notification));
  const blocks: SlackBlock[] = [{ type: 'header', text: { type: 'plain_text', text: truncate(head, SLACK_MAX_HEADER_CHARS), emoji: true } }];
  const total = notification.alerts.length;
  let shown = 0;
  for (; shown < total; shown++) {
    const next = alertBlocks(notification, shown);
    const needsMore = shown + 1 < total || notification.truncatedAlerts > 0;
    if (blocks.length + next.length + (needsMore ? 1 : 0) > SLACK_MAX_BLOCKS) break;
    blocks.push(...next);
  }
  const more = total - shown + notification.truncatedAlerts;
  if (more > 0) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: moreAlertsText(more) } });
  const titles = notification.alerts.slice(0, shown).map((a) => escapeMrkdwn(alertTitle(a)));
  const text = truncateEscaped([escapeMrkdwn(head), ...titles].join('\n'), SLACK_MAX_TEXT_CHARS);
  return { text, blocks };
}

/**
 * The Slack channel. Slack answers `200 ok`, or a 4xx with a plain-text error code
 * (`invalid_blocks`, `no_text`, `channel_not_found`, …), which fails the delivery.
 * @param options.webhookUrl the incoming-webhook URL (a secret: its path is the credential)
 */
export function createSlackChannel(options: { webhookUrl: Secret }): Channel {
  return {
    name: 'slack',
    async send(notification, signal) {
      await postJson('slack', options.webhookUrl, renderSlack(notification), signal);
    },
  };
}
