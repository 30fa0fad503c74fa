/**
 * The state of a group's thread in a chat app that keeps one message per alert group and updates it in
 * place (the Slack app's thread, the Feishu app's card): which of its alerts still fire, who
 * acknowledged, when it escalated, when it resolved. The state moves only forward within a thread
 * (firing → acknowledged/escalated → resolved); a group firing again after its resolve starts a new one.
 * Acknowledgement is per alert: an alert that joins the group, or is announced again, after another
 * was acknowledged is unacknowledged until someone acknowledges it too ({@link unacknowledged}).
 * Pure functions, shared by the channels; each channel's store keeps the thread with its own message id.
 */
import { formatTime } from '../render/format.js';
import type { Locale } from '../render/locale.js';
import type { Notification } from '../render/notification.js';

/** The part of a stored thread these functions read and write. Times are RFC 3339. */
export interface ThreadProgress {
  /** Fingerprints of the group's alerts this thread announced that are still firing. */
  firing: string[];
  /**
   * Fingerprints of the firing alerts acknowledged. Absent in threads stored before it existed: every
   * firing alert then counts as acknowledged once `acknowledgedBy` is set.
   */
  acknowledged?: string[];
  /** Who acknowledged first, and when. */
  acknowledgedBy?: string;
  acknowledgedAt?: string;
  escalatedAt?: string;
  /** Set when no alert of the thread is firing any more: the thread is closed. */
  resolvedAt?: string;
}

/**
 * The thread's state after `notification`: firing alerts join it, resolved ones leave it (the last one
 * closes it with its `endsAt`), an acknowledgement names who, an escalation when. Idempotent: applying
 * the same notification twice gives the same state (a retried delivery may apply it again).
 */
export function advance<T extends ThreadProgress>(thread: T, notification: Notification, nowMs: number): T {
  const at = new Date(nowMs).toISOString();
  if (notification.kind === 'acknowledged') {
    const ack = notification.alerts.find((a) => a.acknowledgement)?.acknowledgement;
    return withAcknowledged(
      thread,
      notification.alerts.map((a) => a.fingerprint),
      { by: ack?.by ?? 'someone', at: ack?.at ?? at },
    );
  }
  if (notification.kind === 'escalation') return { ...thread, escalatedAt: thread.escalatedAt ?? at };
  const firing = new Set(thread.firing);
  const acknowledged = new Set(acknowledgedOf(thread));
  // A firing alert here is a new event of the group (new, or announced again): nobody has acknowledged it.
  for (const alert of notification.alerts) {
    if (alert.status === 'firing') firing.add(alert.fingerprint);
    else firing.delete(alert.fingerprint);
    acknowledged.delete(alert.fingerprint);
  }
  const next: T = { ...thread, firing: [...firing], acknowledged: [...acknowledged] };
  if (firing.size > 0) return next;
  return { ...next, resolvedAt: thread.resolvedAt ?? lastEnd(notification) ?? at };
}

/**
 * The thread with `fingerprints` acknowledged; the first acknowledgement's `by` and `at` are kept.
 * @param ack who acknowledged and when (RFC 3339), used when nobody had yet
 */
export function withAcknowledged<T extends ThreadProgress>(
  thread: T,
  fingerprints: readonly string[],
  ack: { by: string; at: string },
): T {
  const acknowledged = [...new Set([...acknowledgedOf(thread), ...fingerprints])];
  return thread.acknowledgedBy
    ? { ...thread, acknowledged }
    : { ...thread, acknowledged, acknowledgedBy: ack.by, acknowledgedAt: ack.at };
}

/** The thread's firing alerts nobody has acknowledged. */
export function unacknowledged(thread: ThreadProgress): string[] {
  const acknowledged = new Set(acknowledgedOf(thread));
  return thread.firing.filter((f) => !acknowledged.has(f));
}

function acknowledgedOf(thread: ThreadProgress): string[] {
  return thread.acknowledged ?? (thread.acknowledgedBy ? thread.firing : []);
}

/** The latest `endsAt` of the resolved alerts, RFC 3339; `undefined` when none parses. */
function lastEnd(notification: Notification): string | undefined {
  const ends = notification.alerts
    .filter((a) => a.status === 'resolved')
    .map((a) => Date.parse(a.endsAt))
    .filter((t) => Number.isFinite(t) && t > 0);
  return ends.length ? new Date(Math.max(...ends)).toISOString() : undefined;
}

/** Whether `notification` belongs in the stored thread, or must start a new one (none, or closed and firing again). */
export function startsNewThread(thread: ThreadProgress | undefined, notification: Notification): boolean {
  if (!thread) return true;
  const firing = notification.alerts.some((a) => a.status === 'firing');
  return Boolean(thread.resolvedAt) && firing && (notification.kind ?? 'alert') === 'alert';
}

/** How a platform marks up the state line: `strong` for the state's word, `name` for who acknowledged. */
export interface StateMarkup {
  strong(text: string): string;
  name(text: string): string;
}
const PLAIN_STATE: StateMarkup = { strong: (t) => t, name: (t) => t };

const STATE_WORDS = {
  en: {
    firing: (n: number, m: StateMarkup) => `🔥 ${m.strong('Firing')} (${n} alert${n === 1 ? '' : 's'})`,
    resolved: (at: string, m: StateMarkup) => `✅ ${m.strong('Resolved')} at ${at}`,
    acknowledged: (by: string, at?: string) => `👀 Acknowledged by ${by}${at ? ` at ${at}` : ''}`,
    escalated: (at: string) => `📣 Escalated at ${at}`,
    unacknowledged: (n: number, total: number) => `⚠️ ${n} of ${total} not acknowledged`,
  },
  'zh-CN': {
    firing: (n: number, m: StateMarkup) => `🔥 ${m.strong('告警中')}（${n} 条）`,
    resolved: (at: string, m: StateMarkup) => `✅ ${m.strong(`已于 ${at} 恢复`)}`,
    acknowledged: (by: string, at?: string) => `👀 由 ${by}${at ? ` 于 ${at}` : ''} 认领`,
    escalated: (at: string) => `📣 已于 ${at} 升级`,
    unacknowledged: (n: number, total: number) => `⚠️ ${total} 条中 ${n} 条未认领`,
  },
} satisfies Record<Locale, unknown>;

/**
 * The thread's state line, in `locale`: firing (how many) or resolved when, acknowledged by whom and
 * when (and how many firing alerts are not yet), escalated when. Times in the configured `TIME_ZONE`.
 * @param markup the platform's emphasis and escaping (Slack: mrkdwn); default plain text
 */
export function stateLine(state: ThreadProgress, locale: Locale, markup: StateMarkup = PLAIN_STATE): string {
  const w = STATE_WORDS[locale];
  const parts = [
    state.resolvedAt ? w.resolved(formatTime(state.resolvedAt), markup) : w.firing(state.firing.length, markup),
  ];
  if (state.acknowledgedBy)
    parts.push(
      w.acknowledged(markup.name(state.acknowledgedBy), state.acknowledgedAt && formatTime(state.acknowledgedAt)),
    );
  const open = state.resolvedAt ? 0 : unacknowledged(state).length;
  if (state.acknowledgedBy && open) parts.push(w.unacknowledged(open, state.firing.length));
  if (state.escalatedAt) parts.push(w.escalated(formatTime(state.escalatedAt)));
  return parts.join(' · ');
}
