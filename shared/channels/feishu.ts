/**
 * Feishu / Lark through a custom bot webhook: an interactive message card with a coloured header,
 * one `lark_md` block and one button row (Graph, Runbook, Silence) per alert, optionally signed.
 * @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
 */
import { createHmac } from 'node:crypto';
import type { Notification } from '../notification.js';
import type { Secret } from '../secret.js';
import { alertLines, alertLinks, headline, headlineText, type Markup, moreAlertsText, truncateEscaped } from './content.js';
import { postJson } from './http.js';
import { DeliveryError, type Channel } from './types.js';

/** Request body size, bytes. @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot */
export const FEISHU_MAX_BODY_BYTES = 20 * 1024;
/** Reply `code`s meaning "too many requests" (custom bots: 100/min, 5/s). @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot */
export const FEISHU_RATE_LIMIT_CODES: ReadonlySet<number> = new Set([9499, 11232]);
/** Our cap on one alert's text, characters: the same budget as a Slack section, so both show the same. */
export const FEISHU_MAX_ALERT_CHARS = 3000;
/** Bytes kept free for the top-level `timestamp` and `sign` added when signing. */
const SIGNATURE_RESERVE_BYTES = 128;

type Template = 'green' | 'red' | 'orange' | 'blue';
type PlainText = { tag: 'plain_text'; content: string };

/** A card element as this channel emits it. */
export type FeishuElement =
  | { tag: 'div'; text: { tag: 'lark_md'; content: string } }
  | { tag: 'action'; actions: { tag: 'button'; text: PlainText; type: 'default'; url: string }[] }
  | { tag: 'hr' }
  | { tag: 'note'; elements: PlainText[] };

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

/** Escapes the characters `lark_md` would read as markup tags or entities. */
export function escapeLarkMd(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const LARK_MARKUP: Markup = { bold: (s) => `**${s}**`, italic: (s) => `*${s}*`, escape: escapeLarkMd };

/** Header colour: resolved → green, critical → red, warning → orange, anything else → blue. */
export function headerTemplate(status: Notification['status'], severity: string): Template {
  if (status === 'resolved') return 'green';
  if (severity === 'critical') return 'red';
  if (severity === 'warning') return 'orange';
  return 'blue';
}

function alertElements(notification: Notification, index: number): FeishuElement[] {
  const alert = notification.alerts[index]!;
  const content = truncateEscaped(alertLines(alert, LARK_MARKUP).join('\n'), FEISHU_MAX_ALERT_CHARS);
  const elements: FeishuElement[] = index > 0 ? [{ tag: 'hr' }] : [];
  elements.push({ tag: 'div', text: { tag: 'lark_md', content } });
  const actions = alertLinks(alert, notification.externalURL).map((link) => ({
    tag: 'button' as const,
    text: { tag: 'plain_text' as const, content: link.label },
    type: 'default' as const,
    url: link.url,
  }));
  if (actions.length) elements.push({ tag: 'action', actions });
  return elements;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), 'utf8');

/**
 * Renders the card (unsigned). Alerts are shown in order while the body stays under
 * {@link FEISHU_MAX_BODY_BYTES} with room for a signature; the rest, plus alerts Alertmanager
 * truncated, are counted in a `+N more alerts` note.
 */
export function renderFeishu(notification: Notification): FeishuMessage {
  const h = headline(notification);
  const message: FeishuMessage = {
    msg_type: 'interactive',
    card: {
      config: { wide_screen_mode: true },
      header: { title: { tag: 'plain_text', content: headlineText(h) }, template: headerTemplate(h.status, h.severity) },
      elements: [],
    },
  };
  const total = notification.alerts.length;
  const note = (n: number): FeishuElement[] => (n > 0 ? [{ tag: 'note', elements: [{ tag: 'plain_text', content: moreAlertsText(n) }] }] : []);
  const shownElements: FeishuElement[] = [];
  let shown = 0;
  for (; shown < total; shown++) {
    const candidate = [...shownElements, ...alertElements(notification, shown)];
    const rest = total - shown - 1 + notification.truncatedAlerts;
    const body = { ...message, card: { ...message.card, elements: [...candidate, ...note(rest)] } };
    if (jsonBytes(body) + SIGNATURE_RESERVE_BYTES > FEISHU_MAX_BODY_BYTES) break;
    shownElements.splice(0, shownElements.length, ...candidate);
  }
  message.card.elements = [...shownElements, ...note(total - shown + notification.truncatedAlerts)];
  return message;
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

/** Reads Feishu's reply: HTTP 200 with `code` 0 is success, anything else a {@link DeliveryError}. */
function checkReply(body: string): void {
  let reply: { code?: unknown; StatusCode?: unknown; msg?: unknown; StatusMessage?: unknown };
  try {
    reply = JSON.parse(body) as typeof reply;
  } catch {
    throw new DeliveryError('feishu: reply is not JSON', false);
  }
  const code = typeof reply.code === 'number' ? reply.code : reply.StatusCode;
  if (code === 0) return;
  const msg = String(reply.msg ?? reply.StatusMessage ?? '').slice(0, 200);
  throw new DeliveryError(`feishu: code ${String(code)}: ${msg}`, typeof code === 'number' && FEISHU_RATE_LIMIT_CODES.has(code));
}

/**
 * The Feishu channel. Signature errors (`code` 19021), keyword mismatches (19024) and other
 * non-zero codes are permanent failures; rate limits (9499, 11232) are retryable.
 * @param options.webhookUrl the bot's webhook URL (a secret: its path is the credential)
 * @param options.secret the bot's signing secret; when set, `timestamp` and `sign` are added
 * @param options.now clock for the signature timestamp
 */
export function createFeishuChannel(options: { webhookUrl: Secret; secret?: Secret; now?: () => Date }): Channel {
  const now = options.now ?? (() => new Date());
  return {
    name: 'feishu',
    async send(notification, signal) {
      let body: FeishuMessage = renderFeishu(notification);
      if (options.secret) {
        const timestamp = Math.floor(now().getTime() / 1000);
        body = { timestamp: String(timestamp), sign: feishuSign(options.secret.reveal(), timestamp), ...body };
      }
      const reply = await postJson('feishu', options.webhookUrl, body, signal);
      checkReply(reply.body);
    },
  };
}
