/**
 * Feishu as an app (bot of a custom app, Open API): one card per alert group, like the Slack app's
 * thread. The group's first card is sent to the chat and its identity (`message_id`) stored with the
 * group (`shared/store/feishu-cards.ts`); what follows — more alerts, the acknowledgement, the
 * escalation, the resolve — updates that card in place (`PATCH`: its state line, the buttons gone once
 * acknowledged or resolved) and replies in its thread (`reply_in_thread`), instead of new cards. A group
 * firing again after its resolve gets a new card. An alert's follow-ups go to the card that announced it,
 * whatever group key they arrive under (`../thread-parts.ts`).
 *
 * Every send and reply carries a `uuid` made from what it announces, so a retried attempt, or a send
 * repeated after a crash, is the same message to Feishu (it keeps one per uuid for an hour). Order of
 * one update: store the new state (idempotent), update the card (idempotent), reply (uuid), then, for an
 * escalation with `urgent`, buzz the mentioned people (once: recorded in the store).
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/create (`uuid`)
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/reply (`reply_in_thread`)
 * @see https://open.feishu.cn/document/server-docs/im-v1/message-card/patch
 */
import { createHash } from 'node:crypto';
import type { RenderOptions } from '../../render/digest.js';
import type { Locale } from '../../render/locale.js';
import type { Notification } from '../../render/notification.js';
import type { FeishuCard, FeishuCardStore, MentionedUser } from '../../store/feishu-cards.js';
import { DeliveryError, type Channel } from '../channel.js';
import { mentionsToShow, type Mention } from '../mentions.js';
import { advance, startsNewThread, withAcknowledged } from '../threads.js';
import { partsByThread } from '../thread-parts.js';
import { FEISHU_MESSAGE_GONE, FEISHU_NO_THREAD, FeishuApiError } from './api-errors.js';
import { renderAppCard, renderAppReply, withState, type AppCard, type StoredAppCard } from './app-render.js';
import type { FeishuContacts } from './contacts.js';
import { feishuMentionElement } from './index.js';
import { FEISHU_MAX_UUID_CHARS, type FeishuOpenApi, type UrgentKind } from './open-api.js';

export interface FeishuAppChannelOptions extends RenderOptions {
  /** The instance name recorded in the ledger and in card keys. */
  name: string;
  /** Where cards go (`oc_…`). */
  chatId: string;
  /** The app's API client and contact lookups (one per app, shared by its instances and the callback). */
  contacts: FeishuContacts;
  cards: FeishuCardStore;
  /** The instance's `mention` entries. */
  mention?: string[];
  /** `urgent`: escalate the card with Feishu's urgent API to the mentioned people. */
  urgent?: UrgentKind;
  /** Callbacks are verified (`FEISHU_ENCRYPT_KEY`): the card's buttons acknowledge in Feishu. */
  interactive: boolean;
  /** `ALERTMANAGER_URL` is set: offer "acknowledge and silence 1 h". */
  silence: boolean;
  /** Reports what went wrong without failing the delivery (a card not stored, a lookup or urgent that failed). */
  warn(message: string, fields: Record<string, unknown>): void;
  /** Epoch milliseconds. */
  now(): number;
}

/** A Feishu app channel: a {@link Channel} whose card the callback can answer with. */
export interface FeishuAppChannel extends Channel {
  readonly feishuApp: true;
  /**
   * Records an acknowledgement on the group's card and returns the card as it now reads, for the
   * callback's answer (Feishu replaces the clicked card with it).
   * @param messageId the clicked card; `undefined` is returned when the group's stored card is another one
   * @throws the store's error
   */
  acknowledgedCard(
    groupKey: string,
    messageId: string,
    ack: { by: string; at: string; fingerprints: readonly string[] },
  ): Promise<AppCard | undefined>;
}

/** Whether `channel` is a Feishu app channel. */
export const isFeishuAppChannel = (channel: Channel): channel is FeishuAppChannel =>
  (channel as Partial<FeishuAppChannel>).feishuApp === true;

/**
 * @throws (from `send`) the Open API's {@link DeliveryError}s, and a retryable one when the card store fails
 */
export function createFeishuAppChannel(o: FeishuAppChannelOptions): FeishuAppChannel {
  const locale: Locale = o.locale ?? 'zh-CN';
  const c: Cards = { ...o, render: { locale, digestAbove: o.digestAbove }, api: o.contacts.api };
  return {
    name: o.name,
    threaded: true,
    locale,
    feishuApp: true,
    async send(notification, signal) {
      const find = (groupKey: string) => stored(c, () => o.cards.get(o.name, groupKey, o.now()));
      for (const { notification: part, thread: card } of await partsByThread(notification, find)) {
        if (startsNewThread(card, part)) await post(c, part, signal);
        else await follow(c, { card: card!, notification: part }, signal);
      }
    },
    async acknowledgedCard(groupKey, messageId, ack) {
      const card = await o.cards.get(o.name, groupKey, o.now());
      if (!card || card.messageId !== messageId) return undefined;
      const next = withAcknowledged(card, ack.fingerprints, ack);
      if (JSON.stringify(next) !== JSON.stringify(card)) await o.cards.save(o.name, groupKey, next, o.now());
      return withState(card.card as unknown as StoredAppCard, next);
    },
  };
}

/** What every step of a send shares: the instance's options, how it renders, and the app's API client. */
interface Cards extends FeishuAppChannelOptions {
  render: RenderOptions & { locale: Locale };
  api: FeishuOpenApi;
}

/** Runs a card store call; its failure is a retryable {@link DeliveryError}. */
async function stored<T>(c: Cards, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new DeliveryError(`${c.name}: card store failed (${(err as Error).name})`, {
      retryable: true,
      reason: 'other',
    });
  }
}

/** The mentions to show and, for urgent escalation, the users they name (emails looked up). */
async function mentionsOf(c: Cards, notification: Notification, signal: AbortSignal) {
  const shown = mentionsToShow(notification, 'feishu-app', c.mention);
  const emails = shown.flatMap((m) => (m.kind === 'email' ? [m.email] : []));
  let openIds = new Map<string, string>();
  if (emails.length)
    openIds = await c.contacts.openIds(emails, signal).catch((err: Error) => {
      c.warn('feishu mention lookup failed', { channel: c.name, error: err.message, effect: 'mentioned by email' });
      return new Map();
    });
  return { element: feishuMentionElement(shown, openIds), users: usersOf(shown, openIds) };
}

/**
 * Sends the group's card to the chat and keeps it for what follows (an alert's; a follow-up with no card
 * to join is a message of its own).
 * @param replacing the card this one replaces (gone from Feishu), for its uuid
 */
async function post(c: Cards, notification: Notification, signal: AbortSignal, replacing?: string): Promise<void> {
  const mention = await mentionsOf(c, notification, signal);
  const content = renderAppCard(notification, c.render, {
    interactive: c.interactive,
    silence: c.silence,
    mention: mention.element,
  });
  const state = advance({ firing: [] }, notification, c.now());
  const uuid = uuidOf(c.name, notification, replacing ? `repost:${replacing}` : 'send');
  const { messageId } = await c.api.sendCard(c.chatId, withState(content, state), uuid, signal);
  // A follow-up with no card to join (the first message went out another way) is a message of its own.
  if ((notification.kind ?? 'alert') !== 'alert') return;
  const card: FeishuCard = { chatId: c.chatId, messageId, card: { ...content }, mentioned: mention.users, ...state };
  await keep(c, notification.groupKey, card);
}

/** Stores a sent card; one that cannot be stored is a warning, not a failure (the card was delivered). */
async function keep(c: Cards, groupKey: string, card: FeishuCard): Promise<void> {
  const unstored = { channel: c.name, groupKey };
  try {
    if (!(await c.cards.create(c.name, groupKey, card, c.now())))
      c.warn('feishu card not stored', { ...unstored, reason: 'another card of the group was sent at the same time' });
  } catch (err) {
    c.warn('feishu card not stored', {
      ...unstored,
      error: (err as Error).message,
      effect: 'follow-ups post new cards',
    });
  }
}

/**
 * What follows the group's card: its new state stored, the card updated in place (a new card when it is
 * gone), a reply in its thread, and for an escalation the urgent buzz.
 */
async function follow(
  c: Cards,
  { card, notification }: { card: FeishuCard; notification: Notification },
  signal: AbortSignal,
): Promise<void> {
  const next = advance(card, notification, c.now());
  await stored(c, () => c.cards.save(c.name, notification.groupKey, next, c.now()));
  const content = card.card as unknown as StoredAppCard;
  try {
    await c.api.updateCard(card.messageId, withState(content, next), signal);
  } catch (err) {
    // Recalled, deleted or older than 14 days: a new card rather than losing the news.
    if (err instanceof FeishuApiError && FEISHU_MESSAGE_GONE.has(err.code))
      return post(c, notification, signal, card.messageId);
    throw err;
  }
  const escalation = notification.kind === 'escalation';
  const mention = escalation ? content.mention : (await mentionsOf(c, notification, signal)).element;
  const reply = { card: renderAppReply(notification, c.render, mention), uuid: uuidOf(c.name, notification, 'reply') };
  await replyTo(c, card.messageId, reply, signal);
  if (escalation && !next.urgentAt) await buzz(c, notification.groupKey, next, signal);
}

/** Replies to a card in its thread, or beside it when the chat takes no threads. */
async function replyTo(
  c: Cards,
  messageId: string,
  reply: { card: AppCard; uuid: string },
  signal: AbortSignal,
): Promise<void> {
  try {
    await c.api.replyCard(messageId, reply.card, { uuid: reply.uuid, inThread: true }, signal);
  } catch (err) {
    if (!(err instanceof FeishuApiError && FEISHU_NO_THREAD.has(err.code))) throw err;
    await c.api.replyCard(messageId, reply.card, { uuid: reply.uuid, inThread: false }, signal);
  }
}

/**
 * Urgent escalation of the card to the people it mentioned, with the instance's `urgent` kind (none: nothing
 * happens); a refusal that retrying cannot fix is a warning.
 */
async function buzz(c: Cards, groupKey: string, card: FeishuCard, signal: AbortSignal): Promise<void> {
  const kind = c.urgent;
  if (!kind) return;
  if (card.mentioned.length === 0) {
    c.warn('feishu urgent skipped', { channel: c.name, groupKey, reason: 'the card mentions nobody by id' });
    return;
  }
  for (const type of ['open_id', 'user_id'] as const) {
    const ids = card.mentioned.filter((u) => u.type === type).map((u) => u.id);
    if (ids.length === 0) continue;
    try {
      const invalid = await c.api.urgent(card.messageId, kind, { type, ids }, signal);
      if (invalid.length) c.warn('feishu urgent refused some users', { channel: c.name, kind, invalid });
    } catch (err) {
      if (err instanceof DeliveryError && err.retryable) throw err;
      c.warn('feishu urgent failed', { channel: c.name, kind, error: (err as Error).message });
    }
  }
  const buzzed = { ...card, urgentAt: new Date(c.now()).toISOString() };
  await stored(c, () => c.cards.save(c.name, groupKey, buzzed, c.now()));
}

/** The users a card mentions by id, for the urgent API (emails as looked up; `@all` is nobody in particular). */
function usersOf(mentions: Mention[], openIds: ReadonlyMap<string, string>): MentionedUser[] {
  return mentions.flatMap((m): MentionedUser[] => {
    if (m.kind === 'feishu-open-id') return [{ type: 'open_id', id: m.id }];
    if (m.kind === 'feishu-user-id') return [{ type: 'user_id', id: m.id }];
    const id = m.kind === 'email' ? openIds.get(m.email) : undefined;
    return id ? [{ type: 'open_id', id }] : [];
  });
}

/**
 * The `uuid` of a send or reply: a digest of what it announces (the instance, the group, the kind, each
 * alert's fingerprint, status, start and generation), so every attempt at the same message carries the
 * same one and Feishu keeps one message per uuid; a different message gets another.
 */
export function uuidOf(channel: string, notification: Notification, purpose: string): string {
  const alerts = notification.alerts.map((a) => [
    a.fingerprint,
    a.status,
    a.startsAt,
    notification.generations?.[a.fingerprint] ?? 0,
    a.acknowledgement?.at ?? '',
  ]);
  const identity = JSON.stringify([channel, notification.groupKey, notification.kind ?? 'alert', purpose, alerts]);
  return createHash('sha256').update(identity, 'utf8').digest('hex').slice(0, Math.min(32, FEISHU_MAX_UUID_CHARS));
}
