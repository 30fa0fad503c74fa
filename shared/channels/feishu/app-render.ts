/**
 * What the Feishu app sends: the custom bot's card (`renderFeishu`, card JSON 1.0, so both Feishu
 * channels show the same and every client version renders it), shared (`config.update_multi: true`, which
 * `PATCH` needs before and after), with
 * - the @-mentions from configuration as `<at>` tags in a `markdown` element (ids only: never alert text);
 * - the Acknowledge link turned into buttons whose clicks Feishu posts to `POST /v1/feishu/callback`
 *   (`card.action.trigger`): Acknowledge, Acknowledge and silence 1 h (with `ALERTMANAGER_URL`), and Open
 *   page, a link to the acknowledgement page (the fallback, and where longer silences are); a token over
 *   {@link FEISHU_MAX_CALLBACK_VALUE_CHARS} keeps the page link alone;
 * - a state line at the top that each update rewrites (firing, acknowledged by whom, escalated, resolved);
 *   the buttons go once the group is acknowledged or resolved.
 * The words follow the instance's locale.
 * @see https://open.feishu.cn/document/feishu-cards/card-json-v1-structure
 * @see https://open.feishu.cn/document/feishu-cards/card-json-v1-components/interactive-components/button
 * @see https://open.feishu.cn/document/feishu-cards/card-json-v1-components/content-components/rich-text (`<at>`)
 */
import { acknowledgeLink } from '../../render/content.js';
import type { Locale } from '../../render/locale.js';
import type { Notification } from '../../render/notification.js';
import type { RenderOptions } from '../../render/digest.js';
import { stateLine as threadStateLine, type ThreadProgress } from '../threads.js';
import { renderFeishu, type FeishuElement, type FeishuMessage } from './index.js';

/** The `value.action` of the two callback buttons. */
export const FEISHU_ACK_ACTION = 'acknowledge';
export const FEISHU_ACK_SILENCE_ACTION = 'acknowledge_silence';
/** Hours the "acknowledge and silence" button silences for (one of the page's `SILENCE_HOURS`). */
export const FEISHU_SILENCE_HOURS = 1;
/**
 * Longest acknowledgement token a callback button carries in its `value`, characters. Feishu documents no
 * limit of its own for a callback's `value`, but the whole card counts against the message's
 * {@link FEISHU_MAX_CARD_BYTES}, and the two callback buttons would carry the token twice more beside the
 * page link: a longer token (a link naming 50 alerts with 256-byte fingerprints is ~17 KB) gets no callback
 * buttons, only the page link (as Slack's button over its 2,000-character `value`).
 */
export const FEISHU_MAX_CALLBACK_VALUE_CHARS = 2000;
/**
 * A card message's request body, bytes: "卡片及富文本消息请求体最大不能超过 30 KB".
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/create
 */
export const FEISHU_MAX_CARD_BYTES = 30 * 1024;

type PlainText = { tag: 'plain_text'; content: string };
type Button = {
  tag: 'button';
  text: PlainText;
  type: 'primary' | 'default';
  behaviors: (
    | { type: 'callback'; value: { action: string; token: string } }
    | { type: 'open_url'; default_url: string }
  )[];
};
type Element = FeishuElement | { tag: 'action'; actions: Button[] };
/** A card as the app sends it (JSON 1.0). */
export interface AppCard {
  config: { wide_screen_mode: true; update_multi: true };
  header: FeishuMessage['card']['header'];
  elements: Element[];
}

/** What the store keeps of a group's card: its body, and the parts the state decides on. */
export interface StoredAppCard {
  card: AppCard;
  /** The `<at>` element, when the card mentions anyone. */
  mention?: Element;
  /** The buttons' row, dropped once the group is acknowledged or resolved. */
  buttons?: Element;
  locale: Locale;
}

const WORDS = {
  en: {
    acknowledge: 'Acknowledge',
    silence: `Acknowledge and silence ${FEISHU_SILENCE_HOURS} h`,
    page: 'Open page',
  },
  'zh-CN': {
    acknowledge: '认领',
    silence: `认领并静默 ${FEISHU_SILENCE_HOURS} 小时`,
    page: '打开页面',
  },
} satisfies Record<Locale, unknown>;

/**
 * The group's first card (state line added by {@link withState}).
 * @param options.interactive callbacks are verified (`FEISHU_ENCRYPT_KEY` set): buttons post to the
 *   callback; otherwise the Acknowledge link stays a link to the page
 * @param options.silence `ALERTMANAGER_URL` is set: offer "acknowledge and silence"
 */
export function renderAppCard(
  notification: Notification,
  render: RenderOptions & { locale: Locale },
  options: { interactive: boolean; silence: boolean; mention?: Element },
): StoredAppCard {
  const { card } = renderFeishu(notification, render);
  const elements: Element[] = [...card.elements];
  const link = acknowledgeLink(notification, render.locale);
  let buttons: Element | undefined;
  if (link) {
    const linkRow = elements.shift()!;
    const token = new URL(link.url).pathname.split('/').pop() ?? '';
    const callbacks = options.interactive && token.length <= FEISHU_MAX_CALLBACK_VALUE_CHARS;
    buttons = callbacks ? buttonRow(link.url, token, render.locale, options.silence) : linkRow;
  }
  return {
    card: { config: { wide_screen_mode: true, update_multi: true }, header: card.header, elements },
    ...(options.mention && { mention: options.mention }),
    ...(buttons && { buttons }),
    locale: render.locale,
  };
}

function buttonRow(pageUrl: string, token: string, locale: Locale, silence: boolean): Element {
  const w = WORDS[locale];
  const callback = (action: string, label: string, type: Button['type']): Button => ({
    tag: 'button',
    text: { tag: 'plain_text', content: label },
    type,
    behaviors: [{ type: 'callback', value: { action, token } }],
  });
  const actions: Button[] = [
    callback(FEISHU_ACK_ACTION, w.acknowledge, 'primary'),
    ...(silence ? [callback(FEISHU_ACK_SILENCE_ACTION, w.silence, 'default')] : []),
    {
      tag: 'button',
      text: { tag: 'plain_text', content: w.page },
      type: 'default',
      behaviors: [{ type: 'open_url', default_url: pageUrl }],
    },
  ];
  return { tag: 'action', actions };
}

/** The state line: firing, acknowledged by whom (and how many are not yet), escalated, resolved when. */
export const stateLine = (state: ThreadProgress, locale: Locale): string => threadStateLine(state, locale);

/** The stored card with the group's state: the state line on top, then the mentions, then the buttons while open. */
export function withState(stored: StoredAppCard, state: ThreadProgress): AppCard {
  const done = Boolean(state.acknowledgedBy || state.resolvedAt);
  const note: Element = { tag: 'note', elements: [{ tag: 'plain_text', content: stateLine(state, stored.locale) }] };
  const top = [note, ...(stored.mention ? [stored.mention] : []), ...(stored.buttons && !done ? [stored.buttons] : [])];
  return { ...stored.card, elements: [...top, ...stored.card.elements] };
}

/**
 * A reply in the card's thread: the ordinary rendering, mentions on top. Alerts that join the group (or
 * are announced again) keep their own Acknowledge link (acknowledgement is per alert; the card's buttons
 * are for the alerts it announced); other replies drop it.
 */
export function renderAppReply(
  notification: Notification,
  render: RenderOptions & { locale: Locale },
  mention?: Element,
): AppCard {
  const { card } = renderFeishu(notification, render);
  const elements: Element[] = [...card.elements];
  const own = (notification.kind ?? 'alert') === 'alert' && notification.alerts.some((a) => a.status === 'firing');
  if (acknowledgeLink(notification, render.locale) && !own) elements.shift();
  return {
    config: { wide_screen_mode: true, update_multi: true },
    header: card.header,
    elements: [...(mention ? [mention] : []), ...elements],
  };
}
