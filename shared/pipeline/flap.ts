/**
 * The flapping stage: for each new firing alert, ask the store whether it fired within the flap
 * window of its previous firing; those that did are marked on the notification (🔁, `FLAPPING`)
 * instead of reading as a fresh page. Degrades to "not flapping" when the store cannot answer.
 */
import pLimit from 'p-limit';
import type { Alert } from '../alertmanager/schema.js';
import { MAX_DETAILED_ALERTS } from '../render/digest.js';
import type { DedupeStore, FlapRun } from '../store/dedupe.js';
import type { Logger } from '../core/logger.js';
import type { Flapping, Notification } from '../render/notification.js';

/** Default flap window: an alert firing again within 30 minutes of its previous firing is flapping. */
export const DEFAULT_FLAP_WINDOW_MS = 30 * 60_000;
/** Store calls in flight at once. */
const CONCURRENCY = 16;
/**
 * Above this many new firing alerts in one group, flapping is not tracked: a storm is sent as a
 * digest, which shows no per-alert marks, and a write per alert would spend the delivery budget.
 */
export const MAX_TRACKED_FIRINGS = MAX_DETAILED_ALERTS;

/**
 * Records the firing alerts among `alerts` and returns those that flap, by fingerprint.
 * @param windowMs the flap window, milliseconds; `0` turns marking off
 * @param nowMs current time, epoch milliseconds
 * @param known runs already counted from the alert records read with the claims (`DedupeStore.runOf`):
 *   those alerts cost no request here (their record's write stores the run)
 */
export async function recordFirings(
  alerts: Alert[],
  store: DedupeStore,
  windowMs: number,
  nowMs: number,
  log: Logger,
  known: ReadonlyMap<string, FlapRun> = new Map(),
): Promise<Map<string, Flapping>> {
  const flapping = new Map<string, Flapping>();
  for (const [fingerprint, run] of known) if (run.count > 1) flapping.set(fingerprint, { count: run.count, sinceMs: run.sinceMs });
  if (!store.noteFiring || windowMs <= 0) return flapping;
  const noteFiring = store.noteFiring.bind(store);
  const limit = pLimit(CONCURRENCY);
  const firing = alerts.filter((a) => a.status === 'firing' && !Number.isNaN(Date.parse(a.startsAt)));
  if (firing.length > MAX_TRACKED_FIRINGS) {
    log.info('flapping not tracked', { reason: 'alert storm', firing: firing.length });
    return flapping;
  }
  await Promise.all(
    firing
      .filter((alert) => !known.has(alert.fingerprint))
      .map((alert) =>
        limit(async () => {
          try {
            const run = await noteFiring(alert.fingerprint, Date.parse(alert.startsAt), windowMs, nowMs);
            if (run.count > 1) flapping.set(alert.fingerprint, { count: run.count, sinceMs: run.sinceMs });
          } catch (err) {
            log.warn('flap record failed', { fingerprint: alert.fingerprint, error: (err as Error).message });
          }
        }),
      ),
  );
  if (flapping.size) log.info('alerts flapping', { alerts: flapping.size, fingerprints: [...flapping.keys()].slice(0, 20) });
  return flapping;
}

/** The notification with the flap marks of its own alerts (none: unchanged). */
export function markFlapping(notification: Notification, flapping: ReadonlyMap<string, Flapping>): Notification {
  const marks = notification.alerts.flatMap((a) => {
    const f = flapping.get(a.fingerprint);
    return f ? [[a.fingerprint, f] as const] : [];
  });
  return marks.length ? { ...notification, flapping: Object.fromEntries(marks) } : notification;
}
