/**
 * Which alerts escalate, apart from the check that escalates them (`escalation.ts`): the pipeline asks
 * it of every alert it records (`shared/ack/tracker.ts`), while the check itself runs minutes later
 * (EventBridge Scheduler, or `npm start`'s timers), so a webhook's cold start need not load the check.
 */
import type { Alert } from '../alertmanager/schema.js';

/** Severities that escalate (the label `severity`, as the shipped rules set it). */
export const ESCALATED_SEVERITIES: ReadonlySet<string> = new Set(['critical']);

/** Whether an alert escalates when nobody acknowledges it: firing with severity `critical`. */
export function escalates(alert: Pick<Alert, 'status' | 'labels'>): boolean {
  return alert.status === 'firing' && ESCALATED_SEVERITIES.has(alert.labels.severity ?? '');
}
