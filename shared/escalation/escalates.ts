/**
 * Which alerts escalate, apart from the check that escalates them (`escalation.ts`): the pipeline asks
 * it of every alert it records (`shared/ack/tracker.ts`), while the check itself runs minutes later
 * (EventBridge Scheduler, or `npm start`'s timers), so a webhook's cold start need not load the check.
 */
import type { Alert } from '../alertmanager/schema.js';
import { severityLevel } from '../alertmanager/severity.js';

/**
 * Whether an alert escalates when nobody acknowledges it: firing, with a `severity` label of level
 * critical in the one severity mapping (`critical`, `Critical`, `page`, `P1`…: `alertmanager/severity.ts`).
 */
export function escalates(alert: Pick<Alert, 'status' | 'labels'>): boolean {
  return alert.status === 'firing' && severityLevel(alert.labels.severity) === 'critical';
}
