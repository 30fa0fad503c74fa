/**
 * The flap stage: a firing alert that fired again within the flap window of its previous firing is
 * marked on the notification (🔁, `FLAPPING`) instead of reading as a fresh page. Its run comes from the
 * alert record read with its claim (`runOf`, `shared/store/seen.ts`): no request of its own, and the
 * record stage stores the run with the record. Not tracked for a storm: its digest shows no per-alert
 * marks, and its new alerts' records are not read.
 */
import { MAX_DETAILED_ALERTS } from '../render/digest.js';
import type { Flapping, Notification } from '../render/notification.js';
import { runOf } from '../store/seen.js';
import type { GroupContext } from './context.js';

/** Default flap window: an alert firing again within 30 minutes of its previous firing is flapping. */
export const DEFAULT_FLAP_WINDOW_MS = 30 * 60_000;
/** Above this many new firing alerts in one group, flapping is not tracked (a storm, sent as a digest). */
export const MAX_TRACKED_FIRINGS = MAX_DETAILED_ALERTS;
/** Fingerprints named in the `alerts flapping` log line. */
const MAX_NAMED = 20;

/** Counts the flap run of each firing alert to send (`group.runs`) and names those that flap (`group.flapping`). */
export function flap(group: GroupContext): void {
  const windowMs = group.deps.flapWindowMs ?? DEFAULT_FLAP_WINDOW_MS;
  const firing = group.toSend.filter((c) => c.alert.status === 'firing' && !Number.isNaN(Date.parse(c.alert.startsAt)));
  if (windowMs <= 0 || firing.length === 0) return;
  if (firing.length > MAX_TRACKED_FIRINGS) {
    group.log.info('flapping not tracked', { reason: 'alert storm', firing: firing.length });
    return;
  }
  for (const c of firing) {
    const run = c.seen && runOf(c.alert, c.seen, windowMs, group.receivedAt);
    if (!run) continue;
    group.runs.set(c.alert.fingerprint, run);
    if (run.count > 1) group.flapping.set(c.alert.fingerprint, { count: run.count, sinceMs: run.sinceMs });
  }
  if (group.flapping.size)
    group.log.info('alerts flapping', {
      alerts: group.flapping.size,
      fingerprints: [...group.flapping.keys()].slice(0, MAX_NAMED),
    });
}

/** The notification with the flap marks of its own alerts (none: unchanged). */
export function markFlapping(notification: Notification, flapping: ReadonlyMap<string, Flapping>): Notification {
  const marks = notification.alerts.flatMap((a) => {
    const f = flapping.get(a.fingerprint);
    return f ? [[a.fingerprint, f] as const] : [];
  });
  return marks.length ? { ...notification, flapping: Object.fromEntries(marks) } : notification;
}
