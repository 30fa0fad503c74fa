/**
 * Feishu / Lark through a custom bot webhook: an interactive message card with a coloured header,
 * one text block and one button row (Graph, Runbook, Silence) per alert, optionally signed.
 *
 * Text blocks are `plain_text`, not `lark_md`: alert text is written by whoever sets a label or an
 * annotation, and `lark_md` turns `[text](url)` into a link and `<at id=all></at>` into a mention
 * with no documented escape for either. `plain_text` shows every character as typed; the cost is
 * no bold or italics in the card body (the header keeps the colour and the headline).
 * @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
 * @see https://open.feishu.cn/document/ukTMukTMukTM/uUzNwUjL1cDM14SN3ATN (text element: plain_text, lark_md)
 */
import { createHmac } from 'node:crypto';
import type { EnrichedAlert } from '../../enrich/types.js';
import { severityLevel } from '../../alertmanager/severity.js';
import type { Notification } from '../../render/notification.js';
import { cutAlert, REDUCED_FIELD_BYTES } from '../../render/reduce.js';
import { redactedExcerpt, type Secret } from '../../core/secret.js';
import {
  alertLines,
  alertLinks,
  isFiringAgain,
  headline,
  headlineText,
  type Link,
  moreAlertsText,
  PLAIN,
  acknowledgeLink,
  followUpLines,
} from '../../render/content.js';
import { digestText, digestTitle, isStorm, type RenderOptions } from '../../render/digest.js';
import { postJson } from '../http.js';
import { linkLabel, type Locale } from '../../render/locale.js';
import { truncateChars } from '../../core/truncate.js';
import { ContentRefusedError, DeliveryError, type Channel } from '../channel.js';
import { mentionsToShow, type Mention } from '../mentions.js';
import { withKeyword } from './keyword.js';

/** Request body size, bytes. @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot */
export const FEISHU_MAX_BODY_BYTES = 20 * 1024;
/**
 * Reply `code`s meaning "too many requests", whatever the HTTP status (200, 400 or 429): custom bots
 * allow 100/min and 5/s per bot and answer `11232` (or `9499 too many request`) beyond; the OpenAPI
 * gateway answers `99991400` "request trigger frequency limit", with HTTP 429, or 400 for older APIs.
 * @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
 * @see https://open.feishu.cn/document/server-docs/api-call-guide/frequency-control
 */
export const FEISHU_RATE_LIMIT_CODES: ReadonlySet<number> = new Set([9499, 11232, 99991400]);
/**
 * Code 9499 is also Feishu's "Bad Request" (`Bad Request: fail to parse content`; with HTTP 400 for a
 * body it does not take at all): a refusal of the content, told from the rate limit by its `msg`.
 */
const FEISHU_BAD_REQUEST = { code: 9499, msg: /^bad request/i };
/**
 * Reply `code`s that mean the bot is configured differently from this channel: what to fix.
 * @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
 */
export const FEISHU_CONFIGURATION_CODES: ReadonlyMap<number, string> = new Map([
  [19021, "signature check failed: check the signing secret and this host's clock"],
  [19024, "keyword check failed: the bot's keyword security setting rejects this message"],
]);
/** Our cap on one alert's text, characters: the same budget as a Slack section, so both show the same. */
export const FEISHU_MAX_ALERT_CHARS = 3000;
/** Our cap on the header title, characters (a title wraps badly beyond a line or two). */
export const FEISHU_MAX_TITLE_CHARS = 150;
/** Bytes kept free for the top-level `timestamp` and `sign` added when signing. */
const SIGNATURE_RESERVE_BYTES = 128;

type Template = 'green' | 'red' | 'orange' | 'blue';
type PlainText = { tag: 'plain_text'; content: string };

/** A card element as this channel emits it. */
export type FeishuElement =
  | { tag: 'div'; text: PlainText }
  | { tag: 'action'; actions: { tag: 'button'; text: PlainText; type: 'default' | 'primary'; url: string }[] }
  | { tag: 'hr' }
  | { tag: 'note'; elements: PlainText[] }
  /** Only ever the `<at>` tags of configured mentions (`feishuMentionElement`): alert text is never markdown. */
  | { tag: 'markdown'; content: string };

/** The webhook body; `timestamp` (epoch seconds, string) and `sign` only when a secret is configured. */
export interface FeishuMessage {
  timestamp?: string;
  sign?: string;
  msg_type: 'interactive';
  card: {
    config: { wide_screen_mode: true };
    header: { title: PlainText; template: Template };
    elements: FeishuElement[];
  };
}

/** How a Feishu card is rendered: the render options, and the custom bot's security keyword. */
export type FeishuRenderOptions = RenderOptions & { keyword?: string };

/**
 * Header colour: resolved → green; firing by the severity's level (`alertmanager/severity.ts`: `P1`,
 * `Critical` are critical): critical and error → red, warning → orange, anything else → blue.
 */
export function headerTemplate(status: Notification['status'], severity: string): Template {
  if (status === 'resolved') return 'green';
  const level = severityLevel(severity);
  if (level === 'critical' || level === 'error') return 'red';
  if (level === 'warning') return 'orange';
  return 'blue';
}

const buttons = (links: Link[], locale: Locale): FeishuElement[] =>
  links.length
    ? [
        {
          tag: 'action',
          actions: links.map((link) => ({
            tag: 'button' as const,
            text: { tag: 'plain_text' as const, content: linkLabel(link.label, locale) },
            type: 'default' as const,
            url: link.url,
          })),
        },
      ]
    : [];

const div = (content: string): FeishuElement => ({
  tag: 'div',
  text: { tag: 'plain_text', content: truncateChars(content, FEISHU_MAX_ALERT_CHARS) },
});
const note = (text: string): FeishuElement[] =>
  text ? [{ tag: 'note', elements: [{ tag: 'plain_text', content: text }] }] : [];

function alertElements(
  notification: Notification,
  alert: EnrichedAlert,
  first: boolean,
  locale: Locale,
): FeishuElement[] {
  const lines = alertLines(alert, PLAIN, {
    locale,
    flapping: notification.flapping?.[alert.fingerprint],
    firingAgain: isFiringAgain(alert, notification),
    maxChars: FEISHU_MAX_ALERT_CHARS,
  });
  const elements: FeishuElement[] = first ? [] : [{ tag: 'hr' }];
  elements.push(
    div(lines.join('\n')),
    ...buttons(alertLinks(alert, notification.externalURL, notification.grafanaUrl), locale),
  );
  return elements;
}

/** The signed Acknowledge link as a primary button: a custom bot cannot receive callbacks, so a link it is. */
function acknowledgeButton(notification: Notification, locale: Locale): FeishuElement[] {
  const link = acknowledgeLink(notification, locale);
  return link
    ? [
        {
          tag: 'action',
          actions: [
            { tag: 'button', text: { tag: 'plain_text', content: link.label }, type: 'primary', url: link.url },
          ],
        },
      ]
    : [];
}

/** UTF-8 size of the JSON body, bytes (Feishu's limit is in bytes: one CJK character is 3). */
export const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');
const fits = (message: FeishuMessage) => jsonBytes(message) + SIGNATURE_RESERVE_BYTES <= FEISHU_MAX_BODY_BYTES;

/** Elements' JSON size without the array around them: each element's bytes and their count. */
interface Sized {
  bytes: number;
  count: number;
}
const sized = (elements: FeishuElement[]): Sized => ({
  bytes: elements.reduce((sum, e) => sum + jsonBytes(e), 0),
  count: elements.length,
});
const plus = (a: Sized, b: Sized): Sized => ({ bytes: a.bytes + b.bytes, count: a.count + b.count });

/**
 * Whether a card of `title` whose elements are `parts` in order fits, without serialising it: its
 * JSON is the card with no elements plus each element's JSON and a comma between two (`JSON.stringify`
 * adds no whitespace), so the sum is exactly {@link jsonBytes} of the card. Trying each alert against
 * the whole card serialised was O(alerts²): ~0.75 MB allocated for a 10-alert card, ~10 % of what a
 * 10-alert group allocates in `npm start`.
 */
function cardFits(title: string, template: Template): (...parts: Sized[]) => boolean {
  const empty = jsonBytes(card(title, template, []));
  return (...parts) => {
    const all = parts.reduce(plus, { bytes: 0, count: 0 });
    return empty + all.bytes + Math.max(all.count - 1, 0) + SIGNATURE_RESERVE_BYTES <= FEISHU_MAX_BODY_BYTES;
  };
}

function card(title: string, template: Template, elements: FeishuElement[]): FeishuMessage {
  return {
    msg_type: 'interactive',
    card: {
      config: { wide_screen_mode: true },
      header: { title: { tag: 'plain_text', content: truncateChars(title, FEISHU_MAX_TITLE_CHARS) }, template },
      elements,
    },
  };
}

/**
 * Renders the card (unsigned): a digest for a storm ({@link isStorm}), else the alerts in detail,
 * shown in order while the body stays under {@link FEISHU_MAX_BODY_BYTES} with room for a
 * signature (an alert too big on its own is shown reduced); a note says how many are left out and
 * how many Alertmanager did not include.
 * @param options.locale default `zh-CN`
 * @param options.keyword the bot's security keyword: in every card's title (`keyword.ts`)
 */
export function renderFeishu(notification: Notification, options: FeishuRenderOptions = {}): FeishuMessage {
  const locale = options.locale ?? 'zh-CN';
  // The keyword must survive the title's cut: looked for in the cut title, put first when absent.
  const titled = (title: string) => withKeyword(truncateChars(title, FEISHU_MAX_TITLE_CHARS), options.keyword, locale);
  const h = headline(notification);
  const template = headerTemplate(h.status, h.severity);
  if (notification.kind === 'acknowledged')
    return card(titled(headlineText(h, locale)), 'blue', [div(followUpLines(notification, PLAIN, locale).join('\n'))]);
  if (isStorm(notification, options.digestAbove))
    return renderFeishuDigest(notification, template, locale, titled(digestTitle(notification, locale)));
  const total = notification.alerts.length;
  const more = (shown: number) =>
    note(moreAlertsText(total - shown, { truncated: notification.truncatedAlerts, locale }));
  const ack = acknowledgeButton(notification, locale);
  const title = titled(headlineText(h, locale));
  // `build(elements, shown)` fits when `fitting(ackSize, sized(elements), sized(more(shown)))` does.
  const fitting = cardFits(title, template);
  const ackSize = sized(ack);
  const fitsWith = (elements: Sized, shown: number) => fitting(ackSize, elements, sized(more(shown)));
  const shownElements: FeishuElement[] = [];
  let shownSize: Sized = { bytes: 0, count: 0 };
  let shown = 0;
  for (const alert of notification.alerts) {
    // An alert too big for a card of its own goes reduced (`reduce.ts`), or is left out: it never hides the ones after it.
    const own = (a: EnrichedAlert) => alertElements(notification, a, shown === 0, locale);
    let elements = own(alert);
    let size = sized(elements);
    if (!fitsWith(size, 1)) {
      elements = own(cutAlert(alert, REDUCED_FIELD_BYTES, true));
      size = sized(elements);
    }
    if (!fitsWith(size, 1)) continue;
    if (!fitsWith(plus(shownSize, size), shown + 1)) break;
    shownElements.push(...elements);
    shownSize = plus(shownSize, size);
    shown += 1;
  }
  return card(title, template, [...ack, ...shownElements, ...more(shown)]);
}

/** The storm digest; top alerts are dropped from the end while the body is over the byte limit. */
function renderFeishuDigest(
  notification: Notification,
  template: Template,
  locale: Locale,
  title: string,
): FeishuMessage {
  const d = digestText(notification, PLAIN, locale);
  const build = (top: string[]) =>
    card(title, template, [
      ...acknowledgeButton(notification, locale),
      div([...d.summary, ...d.counts, ...d.cause].join('\n')),
      { tag: 'hr' },
      div([d.topTitle, ...top].join('\n')),
      ...note(d.more),
      ...buttons(d.silenceUrl ? [{ label: 'Silence', url: d.silenceUrl }] : [], locale),
    ]);
  let top = d.top;
  while (top.length > 0 && !fits(build(top))) top = top.slice(0, -1);
  return build(top);
}

/**
 * The custom-bot signature: base64 of HMAC-SHA256 keyed with `timestamp + "\n" + secret` over an
 * empty message (Feishu's scheme; the key, not the message, carries the data).
 * @param timestampSeconds epoch seconds, the same value sent as `timestamp`
 * @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
 */
export function feishuSign(secret: string, timestampSeconds: number): string {
  return createHmac('sha256', `${timestampSeconds}\n${secret}`).update('').digest('base64');
}

/** A Feishu reply body: `code`/`msg`, or `StatusCode`/`StatusMessage` (older bots); `undefined` when not JSON. */
function parseReply(body: string): { code: unknown; msg: string } | undefined {
  let reply: { code?: unknown; StatusCode?: unknown; msg?: unknown; StatusMessage?: unknown };
  try {
    reply = JSON.parse(body) as typeof reply;
  } catch {
    return undefined;
  }
  if (reply === null || typeof reply !== 'object') return undefined;
  return {
    code: typeof reply.code === 'number' ? reply.code : reply.StatusCode,
    msg: String(reply.msg ?? reply.StatusMessage ?? ''),
  };
}

/** `9499` is both a rate limit (`too many request`) and `Bad Request…`: only the latter refuses the content. */
const isBadRequest = (r: { code: unknown; msg: string }) =>
  r.code === FEISHU_BAD_REQUEST.code && FEISHU_BAD_REQUEST.msg.test(r.msg);
const isRateLimit = (r: { code: unknown; msg: string }) =>
  typeof r.code === 'number' && FEISHU_RATE_LIMIT_CODES.has(r.code) && !isBadRequest(r);

/**
 * Reads Feishu's reply: HTTP 200 with `code` 0 is success, anything else a {@link DeliveryError}:
 * retryable for rate limits, a {@link ContentRefusedError} for `9499 Bad Request…`, permanent (and
 * named a configuration error) for 19021 and 19024. `msg` is redacted before it is cut ({@link redactedExcerpt}).
 * @param name the channel instance, prefixed to the message
 */
export function checkFeishuReply(name: string, body: string): void {
  const reply = parseReply(body);
  if (!reply) throw new DeliveryError(`${name}: reply is not JSON`, { retryable: false });
  const { code } = reply;
  if (code === 0) return;
  const msg = redactedExcerpt(reply.msg, MSG_EXCERPT_CHARS);
  if (isBadRequest(reply)) throw new ContentRefusedError(`${name}: code ${String(code)}: ${msg}`);
  const configuration = typeof code === 'number' ? FEISHU_CONFIGURATION_CODES.get(code) : undefined;
  const detail = configuration ? ` (configuration error: ${configuration})` : '';
  const rateLimited = isRateLimit(reply);
  throw new DeliveryError(`${name}: code ${String(code)}: ${msg}${detail}`, {
    retryable: rateLimited,
    reason: rateLimited ? 'rate_limited' : 'platform_error',
  });
}

/** Longest `msg` quoted in an error, characters. */
const MSG_EXCERPT_CHARS = 200;

/** A non-2xx reply whose body is Feishu's `9499 Bad Request…`: the body itself was refused (too large, unparsable). */
function refusesContent(_status: number, body: string): boolean {
  const reply = parseReply(body);
  return reply !== undefined && isBadRequest(reply);
}

/** A non-2xx reply (HTTP 400 from older APIs) whose body carries a rate-limit code: transient. */
function rateLimited(_status: number, body: string): boolean {
  const reply = parseReply(body);
  return reply !== undefined && isRateLimit(reply);
}

/**
 * The Feishu channel. Signature errors (`code` 19021), keyword mismatches (19024) and other
 * non-zero codes are permanent failures; rate limits (9499, 11232) are retryable.
 * @param options.webhookUrl the bot's webhook URL (a secret: its path is the credential)
 * @param options.secret the bot's signing secret; when set, `timestamp` and `sign` are added
 * @param options.now clock for the signature timestamp
 * @param options.name the instance name recorded in the ledger; default `feishu`
 * @param options.mention the instance's `mention` entries (ids and `@all`: a custom bot cannot look up emails)
 * @param options.locale default `zh-CN`
 * @param options.keyword the bot's keyword (keyword security): every card carries it
 */
export function createFeishuChannel(
  options: {
    webhookUrl: Secret;
    secret?: Secret;
    now?: () => Date;
    name?: string;
    mention?: string[];
  } & FeishuRenderOptions,
): Channel {
  const now = options.now ?? (() => new Date());
  const name = options.name ?? 'feishu';
  const render: FeishuRenderOptions = {
    locale: options.locale ?? 'zh-CN',
    digestAbove: options.digestAbove,
    keyword: options.keyword,
  };
  return {
    name,
    locale: render.locale,
    async send(notification, signal) {
      let body: FeishuMessage = withMentions(
        renderFeishu(notification, render),
        feishuMentionElement(mentionsToShow(notification, 'feishu-bot', options.mention), new Map()),
      );
      if (options.secret) {
        const timestamp = Math.floor(now().getTime() / 1000);
        body = { timestamp: String(timestamp), sign: feishuSign(options.secret.reveal(), timestamp), ...body };
      }
      const reply = await postJson(
        { channel: name, url: options.webhookUrl, refusesContent, rateLimited },
        body,
        signal,
      );
      checkFeishuReply(name, reply.body);
    },
  };
}

/** The card with the `<at>` element first; unchanged without one. */
function withMentions(message: FeishuMessage, mention: FeishuElement | undefined): FeishuMessage {
  return mention ? { ...message, card: { ...message.card, elements: [mention, ...message.card.elements] } } : message;
}

/**
 * The `<at>` tags of the mentions in a `markdown` element (ids from configuration only, each checked by
 * `shared/channels/mentions.ts`, so nothing in them is markdown); an email is its open_id when `openIds`
 * has it, else `<at email=…>` (which only an app's cards render). `undefined` when there are none.
 */
export function feishuMentionElement(
  mentions: Mention[],
  openIds: ReadonlyMap<string, string>,
): FeishuElement | undefined {
  const tags = mentions.flatMap((m) => {
    if (m.kind === 'feishu-open-id' || m.kind === 'feishu-user-id') return [`<at id=${m.id}></at>`];
    if (m.kind === 'all') return ['<at id=all></at>'];
    if (m.kind !== 'email') return [];
    const id = openIds.get(m.email);
    return [id ? `<at id=${id}></at>` : `<at email=${m.email}></at>`];
  });
  return tags.length ? { tag: 'markdown', content: tags.join(' ') } : undefined;
}
