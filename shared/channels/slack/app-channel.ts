/**
 * Slack as an app (bot token, `chat.postMessage`): one thread per alert group. The group's first
 * message is posted top-level and its place (`channel`, `ts`) stored with the group; what follows —
 * more alerts, the acknowledgement, the escalation, the resolve — updates that message in place
 * (`chat.update`: its state line) and replies in its thread (`thread_ts`), instead of new top-level
 * messages. A group firing again after its resolve starts a new thread.
 *
 * Order of one update, so that a retried attempt never posts a reply twice: store the new state (a
 * set-like, idempotent change), `chat.update` (idempotent), then the reply (the one step that is not).
 * A first post whose thread cannot be stored is still delivered (reported through `warn`): later
 * follow-ups then post top-level, as the webhook channel does. An alert's follow-ups go to the thread that
 * announced it, whatever group key they arrive under (`../thread-parts.ts`).
 * @see https://api.slack.com/methods/chat.postMessage
 * @see https://api.slack.com/methods/chat.update
 * @see https://api.slack.com/messaging/retrieving#individual_messages (threads and `thread_ts`)
 */
import type { Notification } from '../../render/notification.js';
import type { RenderOptions } from '../../render/digest.js';
import type { Locale } from '../../render/locale.js';
import { DeliveryError, type Channel } from '../channel.js';
import { renderAppMessage, renderAppReply, withState } from './app-render.js';
import { advance, newThread, startsNewThread, type SlackThread, type SlackThreadStore } from './threads.js';
import { partsByThread } from '../thread-parts.js';
import { mentionsToShow, slackMentionText } from '../mentions.js';
import { withSlackMentions } from './index.js';
import { SLACK_MESSAGE_GONE, SlackPlatformError, type SlackApi } from './web-api.js';

export interface SlackAppChannelOptions extends RenderOptions {
  /** The instance name recorded in the ledger and in thread keys; default `slack`. */
  name?: string;
  api: SlackApi;
  /** Where top-level messages go: a channel id (`C…`) or name, as `SLACK_CHANNEL` or the routing file gives it. */
  channel: string;
  /** The instance's `mention` entries (`shared/channels/mentions.ts`). */
  mention?: string[];
  threads: SlackThreadStore;
  /** Reports what went wrong without failing the delivery (a thread that could not be stored). */
  warn(message: string, fields: Record<string, unknown>): void;
  /** Epoch milliseconds. */
  now(): number;
}

/**
 * @returns a channel that keeps one thread per group (`threaded`: escalations are also sent to it)
 * @throws (from `send`) the Web API's {@link DeliveryError}s, and a retryable one when the thread store fails
 */
export function createSlackAppChannel(options: SlackAppChannelOptions): Channel {
  const name = options.name ?? 'slack';
  const render = { locale: options.locale ?? 'en', digestAbove: options.digestAbove };
  const t: Threads = { ...options, name, render };
  return {
    name,
    threaded: true,
    locale: render.locale,
    async send(notification, signal) {
      const find = (groupKey: string) => stored(t, () => options.threads.get(name, groupKey, options.now()));
      for (const { notification: part, thread } of await partsByThread(notification, find)) {
        if (startsNewThread(thread, part)) await post(t, part, signal);
        else await follow(t, { thread: thread!, notification: part }, signal);
      }
    },
  };
}

/** What every step of a send shares: the instance's options, its name settled, and how it renders. */
interface Threads extends SlackAppChannelOptions {
  name: string;
  render: RenderOptions & { locale: Locale };
}

/** Runs a thread store call; its failure is a retryable {@link DeliveryError}. */
async function stored<T>(t: Threads, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new DeliveryError(`${t.name}: thread store failed (${(err as Error).name})`, {
      retryable: true,
      reason: 'other',
    });
  }
}

/** The `<@U…>` mentions of the instance and the alerts, as text to prefix. */
const mentionText = (t: Threads, n: Notification) => slackMentionText(mentionsToShow(n, 'slack', t.mention));

/** Posts the group's first message top-level and keeps its thread (a follow-up's is a message of its own). */
async function post(t: Threads, notification: Notification, signal: AbortSignal): Promise<void> {
  const content = withSlackMentions(renderAppMessage(notification, t.render), mentionText(t, notification));
  const state = newThread({ channel: t.channel, ts: '' }, content, notification, t.now());
  const posted = await t.api.post(t.channel, withState(content, state, t.render.locale), signal);
  // A follow-up with no thread to join (the first message went out another way) is a message of its own.
  if ((notification.kind ?? 'alert') !== 'alert') return;
  await keep(t, notification.groupKey, { ...state, ...posted });
}

/** Stores a posted thread; one that cannot be stored is a warning, not a failure (the message was delivered). */
async function keep(t: Threads, groupKey: string, thread: SlackThread): Promise<void> {
  try {
    if (!(await t.threads.create(t.name, groupKey, thread, t.now()))) {
      t.warn('slack thread not stored', {
        channel: t.name,
        groupKey,
        reason: 'another message of the group was posted at the same time (an HA peer); follow-ups go to that one',
      });
    }
  } catch (err) {
    t.warn('slack thread not stored', {
      channel: t.name,
      groupKey,
      error: (err as Error).message,
      effect: 'follow-ups of this group post top-level',
    });
  }
}

/** What follows the first message: its new state stored, the message updated in place, then a reply in its thread. */
async function follow(
  t: Threads,
  { thread, notification }: { thread: SlackThread; notification: Notification },
  signal: AbortSignal,
): Promise<void> {
  const next = advance(thread, notification, t.now());
  await stored(t, () => t.threads.save(t.name, notification.groupKey, next, t.now()));
  try {
    await t.api.update(thread.channel, thread.ts, withState(thread.content, next, t.render.locale), signal);
  } catch (err) {
    // The original was deleted or can no longer be edited: start a new thread rather than lose the news.
    if (err instanceof SlackPlatformError && SLACK_MESSAGE_GONE.has(err.code)) return post(t, notification, signal);
    throw err;
  }
  const reply = withSlackMentions(renderAppReply(notification, t.render), mentionText(t, notification));
  await t.api.post(thread.channel, reply, signal, thread.ts);
}
