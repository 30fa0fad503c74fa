/**
 * The plain-text rendering of a notification, with links spelled out: the SNS `Message` and the
 * console output.
 */
import type { Notification } from '../notification.js';
import { alertLines, alertLinks, headline, headlineText, moreAlertsText, PLAIN } from './content.js';

/** Room kept for the `+N more alerts` line when alerts are left out (bytes, generous). */
const MORE_LINE_RESERVE_BYTES = 64;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * Renders a notification as plain text: the headline, then one paragraph per alert (lines of
 * {@link alertLines} followed by `Graph: <url>`, `Runbook: <url>`, `Silence: <url>`), then
 * `+N more alerts` when alerts were left out or Alertmanager truncated some.
 * @param maxBytes UTF-8 size limit of the result; alerts that do not fit are left out, whole
 * @example renderText(n) // '🔥 FIRING · warning · VLLMQueueBacklog (2)\n\n🔥 llama-3.1-70b: 85 requests waiting\n…'
 */
export function renderText(notification: Notification, maxBytes = Number.POSITIVE_INFINITY): string {
  const head = headlineText(headline(notification));
  const paragraphs: string[] = [];
  let size = bytes(head);
  let shown = 0;
  for (const alert of notification.alerts) {
    const links = alertLinks(alert, notification.externalURL).map((l) => `${l.label}: ${l.url}`);
    const paragraph = [...alertLines(alert, PLAIN), ...links].join('\n');
    const left = notification.alerts.length - shown - 1 + notification.truncatedAlerts;
    const reserve = left > 0 ? MORE_LINE_RESERVE_BYTES : 0;
    if (size + 2 + bytes(paragraph) + reserve > maxBytes) break;
    paragraphs.push(paragraph);
    size += 2 + bytes(paragraph);
    shown += 1;
  }
  const more = notification.alerts.length - shown + notification.truncatedAlerts;
  if (more > 0) paragraphs.push(moreAlertsText(more));
  return [head, ...paragraphs].join('\n\n');
}
