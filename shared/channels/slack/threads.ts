/**
 * One Slack thread per alert group and Slack-app channel: the top-level message, where it is, and the
 * group's state that the message shows (`../threads.ts`: how the state moves). The thread is kept by
 * `shared/store/slack-threads.ts` (the type, the port, the adapter).
 */
import type { Notification } from '../../render/notification.js';
import type { SlackThread, StoredSlackContent } from '../../store/slack-threads.js';
import { advance } from '../threads.js';

export { advance, startsNewThread } from '../threads.js';
export type { SlackThread, SlackThreadStore } from '../../store/slack-threads.js';

/** A thread's first state, for the message just posted. */
export function newThread(
  posted: { channel: string; ts: string },
  content: StoredSlackContent,
  notification: Notification,
  nowMs: number,
): SlackThread {
  return advance({ channel: posted.channel, ts: posted.ts, content, firing: [] }, notification, nowMs);
}
