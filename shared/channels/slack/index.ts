/**
 * Slack through an incoming webhook: a Block Kit message with a header, one section, an image (the
 * alert's chart, when it has one) and one context (links) block per alert, and a `+N more alerts` section when the alerts do not fit.
 * @see https://api.slack.com/messaging/webhooks
 * @see https://api.slack.com/reference/block-kit/blocks
 */
import type { Notification } from '../../render/notification.js';
import { showFormattingMarks } from '../../render/formatting-marks.js';
import type { Secret } from '../../core/secret.js';
import {
  alertImage,
  alertLines,
  alertLinks,
  isFiringAgain,
  alertTitle,
  headline,
  headlineText,
  type Link,
  type Markup,
  moreAlertsText,
  truncateEscaped,
  acknowledgeLink,
  followUpLines,
} from '../../render/content.js';
import { digestText, digestTitle, isStorm, type RenderOptions } from '../../render/digest.js';
import { postJson, type JsonPost } from '../http.js';
import { linkLabel, type Locale } from '../../render/locale.js';
import { truncateChars } from '../../core/truncate.js';
import type { Channel } from '../channel.js';
import { mentionsToShow, slackMentionText } from '../mentions.js';

/** Blocks per message. @see https://api.slack.com/reference/block-kit/blocks */
export const SLACK_MAX_BLOCKS = 50;
/** Header block text, characters. @see https://api.slack.com/reference/block-kit/blocks#header */
export const SLACK_MAX_HEADER_CHARS = 150;
/** Section text (and any text object), characters. @see https://api.slack.com/reference/block-kit/blocks#section */
export const SLACK_MAX_SECTION_CHARS = 3000;
/** Top-level `text`, characters; Slack truncates beyond it. @see https://api.slack.com/methods/chat.postMessage#truncating */
export const SLACK_MAX_TEXT_CHARS = 40_000;
/**
 * An image block's `image_url` and `alt_text`, characters. Slack fetches the image itself when the
 * message is posted, and refuses the message (`invalid_blocks`) when it cannot: the reduced
 * rendering sent then has no image (`shared/render/reduce.ts`).
 * @see https://docs.slack.dev/reference/block-kit/blocks/image-block
 */
export const SLACK_MAX_IMAGE_URL_CHARS = 3000;
export const SLACK_MAX_ALT_TEXT_CHARS = 2000;
/** A button's `url`, characters. @see https://api.slack.com/reference/block-kit/block-elements#button */
export const SLACK_MAX_BUTTON_URL_CHARS = 3000;
/**
 * Error codes of a `400` reply that refuse the message's content, not the webhook's configuration
 * (`invalid_token`, `channel_not_found`, `no_service` and the like).
 * @see https://api.slack.com/messaging/webhooks#handling_errors
 */
export const SLACK_CONTENT_ERRORS: ReadonlySet<string> = new Set([
  'invalid_blocks',
  'invalid_blocks_format',
  'invalid_payload',
  'no_text',
  'invalid_attachments',
  'too_many_attachments',
  'msg_too_long',
]);

const refusesContent = (status: number, body: string) => status === 400 && SLACK_CONTENT_ERRORS.has(body.trim());

/**
 * Slack's success reply: an incoming webhook answers `200` with the body `ok` (errors come as 4xx with
 * an error code, or, from older endpoints, `200` with the code as body); a workflow webhook answers
 * JSON `{"ok":true}`. Any other 200 (`invalid_payload`, a proxy's login page, nothing) is not Slack
 * having posted the message.
 * @see https://api.slack.com/messaging/webhooks#handling_errors
 * @see https://docs.slack.dev/tools/python-slack-sdk/webhook (`response.body == "ok"`)
 */
export function isSlackSuccess(body: string): boolean {
  const text = body.trim();
  if (text === 'ok') return true;
  try {
    return (JSON.parse(text) as { ok?: unknown } | null)?.ok === true;
  } catch {
    return false;
  }
}

/** A Block Kit block as this channel emits it (header, section, context). */
export type SlackBlock =
  | { type: 'header'; text: { type: 'plain_text'; text: string; emoji: true } }
  | { type: 'section'; text: Mrkdwn }
  | { type: 'context'; elements: Mrkdwn[] }
  | { type: 'image'; image_url: string; alt_text: string }
  | {
      type: 'actions';
      elements: {
        type: 'button';
        text: { type: 'plain_text'; text: string; emoji: true };
        url: string;
        style: 'primary';
        action_id: string;
      }[];
    };

/**
 * A mrkdwn text object. Always `verbatim`: Slack then applies our markup and explicit `<url|label>`
 * links but does not parse the text itself (no automatic links, channel names or mentions from
 * alert text, beyond what {@link escapeMrkdwn} already stops).
 * @see https://api.slack.com/reference/block-kit/composition-objects#text
 */
export type Mrkdwn = { type: 'mrkdwn'; text: string; verbatim: true };
const mrkdwn = (text: string): Mrkdwn => ({ type: 'mrkdwn', text, verbatim: true });

/** The incoming-webhook body. `text` is the notification fallback and is always present. */
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/**
 * Alert text as text in mrkdwn: Slack's three control characters escaped (`&`, `<`, `>`: no `<!channel>`,
 * `<@U…>` or `<url|text>` from it), and its formatting marks (`*`, `_`, `~`, `` ` ``) shown, not applied
 * (`shared/render/formatting-marks.ts`).
 * @see https://api.slack.com/reference/surfaces/formatting#escaping
 */
export function escapeMrkdwn(text: string): string {
  return showFormattingMarks(text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
}

const SLACK_MARKUP: Markup = { bold: (s) => `*${s}*`, italic: (s) => `_${s}_`, escape: escapeMrkdwn };

/** `<url|label>`, with the characters that would end the link percent-encoded and the label in `locale`. */
function slackLink(link: Link, locale: Locale): string {
  const url = link.url.replace(/&/g, '&amp;').replace(/</g, '%3C').replace(/>/g, '%3E').replace(/\|/g, '%7C');
  return `<${url}|${escapeMrkdwn(linkLabel(link.label, locale))}>`;
}

/** Links joined with ` · `, keeping only those that fit in one text object. */
function linksText(links: Link[], locale: Locale): string {
  let text = '';
  for (const link of links) {
    const next = text ? `${text} · ${slackLink(link, locale)}` : slackLink(link, locale);
    if (next.length <= SLACK_MAX_SECTION_CHARS) text = next;
  }
  return text;
}

function alertBlocks(notification: Notification, index: number, locale: Locale): SlackBlock[] {
  const alert = notification.alerts[index]!;
  const lines = alertLines(alert, SLACK_MARKUP, {
    locale,
    flapping: notification.flapping?.[alert.fingerprint],
    firingAgain: isFiringAgain(alert, notification),
    maxChars: SLACK_MAX_SECTION_CHARS,
  });
  const section = truncateEscaped(lines.join('\n'), SLACK_MAX_SECTION_CHARS);
  const blocks: SlackBlock[] = [{ type: 'section', text: mrkdwn(section) }];
  // Our chart, else Grafana's screenshot of the rule's panel.
  const image = alertImage(alert);
  if (image && image.length <= SLACK_MAX_IMAGE_URL_CHARS)
    blocks.push({
      type: 'image',
      image_url: image,
      alt_text: truncateChars(`Chart: ${alertTitle(alert)}`, SLACK_MAX_ALT_TEXT_CHARS),
    });
  // The chart is the image above, not a link too.
  const links = linksText(
    alertLinks(alert, notification.externalURL, notification.grafanaUrl).filter((l) => l.label !== 'Chart'),
    locale,
  );
  if (links) blocks.push({ type: 'context', elements: [mrkdwn(links)] });
  return blocks;
}

const section = (text: string): SlackBlock => ({
  type: 'section',
  text: mrkdwn(truncateEscaped(text, SLACK_MAX_SECTION_CHARS)),
});
const header = (text: string): SlackBlock => ({
  type: 'header',
  text: { type: 'plain_text', text: truncateChars(text, SLACK_MAX_HEADER_CHARS), emoji: true },
});

/**
 * Renders the webhook body: a digest for a storm ({@link isStorm}), else the alerts in detail.
 * In detail, alerts are shown in order while they fit in {@link SLACK_MAX_BLOCKS} (keeping one block
 * for what is left out, which also names the alerts Alertmanager truncated). Every text is cut to
 * its Slack limit; `text` (the notification fallback) is always present.
 * @param options.locale default `en`
 */
export function renderSlack(notification: Notification, options: RenderOptions = {}): SlackMessage {
  const locale = options.locale ?? 'en';
  if (notification.kind === 'acknowledged') return renderSlackFollowUp(notification, locale);
  if (isStorm(notification, options.digestAbove)) return renderSlackDigest(notification, locale);
  const head = headlineText(headline(notification), locale);
  const blocks: SlackBlock[] = [header(head), ...acknowledgeButton(notification, locale)];
  const total = notification.alerts.length;
  let shown = 0;
  for (; shown < total; shown++) {
    const next = alertBlocks(notification, shown, locale);
    const needsMore = shown + 1 < total || notification.truncatedAlerts > 0;
    if (blocks.length + next.length + (needsMore ? 1 : 0) > SLACK_MAX_BLOCKS) break;
    blocks.push(...next);
  }
  const more = moreAlertsText(total - shown, { truncated: notification.truncatedAlerts, locale });
  if (more) blocks.push(section(more));
  const titles = notification.alerts.slice(0, shown).map((a) => escapeMrkdwn(alertTitle(a)));
  const text = truncateEscaped([escapeMrkdwn(head), ...titles].join('\n'), SLACK_MAX_TEXT_CHARS);
  return { text, blocks };
}

/**
 * The signed Acknowledge link as a link button (it opens the page; Slack sends no interaction to us).
 * @see https://api.slack.com/reference/block-kit/block-elements#button
 */
function acknowledgeButton(notification: Notification, locale: Locale): SlackBlock[] {
  const link = acknowledgeLink(notification, locale);
  if (!link || link.url.length > SLACK_MAX_BUTTON_URL_CHARS) return [];
  return [
    {
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: link.label, emoji: true },
          url: link.url,
          style: 'primary',
          action_id: 'acknowledge',
        },
      ],
    },
  ];
}

/** The short "acknowledged by X" follow-up: header and one section. */
function renderSlackFollowUp(notification: Notification, locale: Locale): SlackMessage {
  const head = headlineText(headline(notification), locale);
  const body = followUpLines(notification, SLACK_MARKUP, locale).join('\n');
  return {
    text: truncateEscaped([escapeMrkdwn(head), body].join('\n'), SLACK_MAX_TEXT_CHARS),
    blocks: [header(head), section(body)],
  };
}

/** The storm digest: header, one Acknowledge button for all its firing alerts, summary and counts, the top alerts, what is left out, a group silence link. */
function renderSlackDigest(notification: Notification, locale: Locale): SlackMessage {
  const head = digestTitle(notification, locale);
  const d = digestText(notification, SLACK_MARKUP, locale);
  const blocks: SlackBlock[] = [
    header(head),
    ...acknowledgeButton(notification, locale),
    section([...d.summary, ...d.counts, ...d.cause].join('\n')),
    section([d.topTitle, ...d.top].join('\n')),
  ];
  if (d.more) blocks.push(section(d.more));
  if (d.silenceUrl)
    blocks.push({ type: 'context', elements: [mrkdwn(linksText([{ label: 'Silence', url: d.silenceUrl }], locale))] });
  const text = truncateEscaped([escapeMrkdwn(head), ...d.summary].join('\n'), SLACK_MAX_TEXT_CHARS);
  return { text, blocks };
}

/**
 * The Slack channel. Slack answers `200 ok`, or a 4xx with a plain-text error code
 * (`invalid_blocks`, `no_text`, `channel_not_found`, …), which fails the delivery ({@link SLACK_CONTENT_ERRORS}
 * as a `ContentRefusedError`); errors start with the channel's name (`slack-platform: HTTP 404: channel_not_found`).
 * A 2xx is acceptance when its body is `ok` ({@link isSlackSuccess}), or when the body stalls or drops
 * after the status line (a reply that stalls after it must not be sent again); another 2xx body fails.
 * @param options.webhookUrl the incoming-webhook URL (a secret: its path is the credential)
 * @param options.name the instance name recorded in the ledger; default `slack`
 * @param options.mention the instance's `mention` entries (`shared/channels/mentions.ts`)
 * @param options.locale default `en`
 * @param options.digestAbove see {@link RenderOptions}
 */
export function createSlackChannel(
  options: { webhookUrl: Secret; name?: string; mention?: string[] } & RenderOptions,
): Channel {
  const name = options.name ?? 'slack';
  const render: RenderOptions = { locale: options.locale ?? 'en', digestAbove: options.digestAbove };
  const webhook: JsonPost = {
    channel: name,
    url: options.webhookUrl,
    statusDecides: true,
    successBody: isSlackSuccess,
    refusesContent,
  };
  return {
    name,
    locale: render.locale,
    async send(notification, signal) {
      const mentions = slackMentionText(mentionsToShow(notification, 'slack', options.mention));
      await postJson(webhook, withSlackMentions(renderSlack(notification, render), mentions), signal);
    },
  };
}

/**
 * The message with its @-mentions (`<@U…>`, `<!subteam^S…>`, `<!here>`: from configuration only) in a
 * section under the header and at the start of `text` (the notification people see); a full message gives
 * up its last alert block before the final "+N more" section for it. Unchanged when `mentions` is `''`.
 */
export function withSlackMentions<M extends { text: string; blocks: SlackBlock[] }>(message: M, mentions: string): M {
  if (!mentions) return message;
  const blocks = [...message.blocks];
  blocks.splice(blocks[0]?.type === 'header' ? 1 : 0, 0, { type: 'section', text: mrkdwn(mentions) });
  while (blocks.length > SLACK_MAX_BLOCKS) blocks.splice(blocks.length - 2, 1);
  return { ...message, text: truncateChars(`${mentions} ${message.text}`, SLACK_MAX_TEXT_CHARS), blocks };
}
