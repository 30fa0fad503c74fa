/**
 * The plain-text rendering of a notification, with links spelled out: the SNS `Message` and the
 * console output.
 */
import type { EnrichedAlert } from '../enrich/types.js';
import type { Notification } from './notification.js';
import { cutAlert, REDUCED_FIELD_BYTES } from './reduce.js';
import {
  alertLines,
  alertLinks,
  isFiringAgain,
  headline,
  headlineText,
  moreAlertsText,
  PLAIN,
  acknowledgeLink,
  followUpLines,
} from './content.js';
import { digestText, digestTitle, isStorm, type RenderOptions } from './digest.js';
import { linkLabel, messages, type Locale } from './locale.js';
import { truncateBytes, utf8Bytes } from '../core/truncate.js';

/** Room kept for the line saying what was left out (bytes, generous). */
const MORE_LINE_RESERVE_BYTES = 128;

/**
 * Renders a notification as plain text: a digest for a storm ({@link isStorm}); else the headline,
 * then one paragraph per alert (lines of {@link alertLines} followed by `Graph: <url>`,
 * `Runbook: <url>`, `Silence: <url>`), then what was left out (`+3 more alerts`, `+1,497 not
 * included by Alertmanager`).
 * @param maxBytes UTF-8 size limit of the result; alerts that do not fit are left out, whole (one too
 *   big on its own is shown reduced)
 * @param options.locale default `en`
 * @example renderText(n) // '🔥 FIRING · warning · VLLMQueueBacklog (2)\n\n🔥 llama-3.1-70b: 85 requests waiting\n…'
 */
export function renderText(
  notification: Notification,
  maxBytes = Number.POSITIVE_INFINITY,
  options: RenderOptions = {},
): string {
  const locale = options.locale ?? 'en';
  if (notification.kind === 'acknowledged')
    return truncateBytes(
      [headlineText(headline(notification), locale), ...followUpLines(notification, PLAIN, locale)].join('\n\n'),
      maxBytes,
    );
  if (isStorm(notification, options.digestAbove)) return renderTextDigest(notification, maxBytes, locale);
  const ack = acknowledgeLink(notification, locale);
  const head = [headlineText(headline(notification), locale), ...(ack ? [`${ack.label}: ${ack.url}`] : [])].join('\n');
  const paragraphs: string[] = [];
  let size = utf8Bytes(head);
  let shown = 0;
  // An alert too big for the message on its own goes reduced (`reduce.ts`), or is left out: it never hides the ones after it.
  const room = maxBytes - size - 2 - MORE_LINE_RESERVE_BYTES;
  for (const alert of notification.alerts) {
    let paragraph = alertParagraph(notification, alert, locale);
    if (utf8Bytes(paragraph) > room)
      paragraph = alertParagraph(notification, cutAlert(alert, REDUCED_FIELD_BYTES, true), locale);
    if (utf8Bytes(paragraph) > room) continue;
    const left = notification.alerts.length - shown - 1 + notification.truncatedAlerts;
    const reserve = left > 0 ? MORE_LINE_RESERVE_BYTES : 0;
    if (size + 2 + utf8Bytes(paragraph) + reserve > maxBytes) break;
    paragraphs.push(paragraph);
    size += 2 + utf8Bytes(paragraph);
    shown += 1;
  }
  const more = moreAlertsText(notification.alerts.length - shown, { truncated: notification.truncatedAlerts, locale });
  if (more) paragraphs.push(more);
  return truncateBytes([head, ...paragraphs].join('\n\n'), maxBytes);
}

/** One alert's lines followed by its links spelled out (`Graph: <url>`). */
function alertParagraph(notification: Notification, alert: EnrichedAlert, locale: Locale): string {
  const links = alertLinks(alert, notification.externalURL, notification.grafanaUrl).map(
    (l) => `${linkLabel(l.label, locale)}: ${l.url}`,
  );
  const lines = alertLines(alert, PLAIN, {
    locale,
    flapping: notification.flapping?.[alert.fingerprint],
    firingAgain: isFiringAgain(alert, notification),
  });
  return [...lines, ...links].join('\n');
}

/** The storm digest as text; top alerts are dropped from the end while it is over `maxBytes`. */
function renderTextDigest(notification: Notification, maxBytes: number, locale: Locale): string {
  const d = digestText(notification, PLAIN, locale);
  const silence = d.silenceUrl ? `${messages(locale).digest.silenceGroup}: ${d.silenceUrl}` : '';
  // Right under the title, like a detailed message's: the one link for every firing alert of the digest.
  const ack = acknowledgeLink(notification, locale);
  const build = (top: string[]) =>
    [
      [
        digestTitle(notification, locale),
        ...(ack ? [`${ack.label}: ${ack.url}`] : []),
        ...d.summary,
        ...d.counts,
        ...d.cause,
      ].join('\n'),
      [d.topTitle, ...top].join('\n'),
      d.more,
      silence,
    ]
      .filter(Boolean)
      .join('\n\n');
  let top = d.top;
  while (top.length > 0 && utf8Bytes(build(top)) > maxBytes) top = top.slice(0, -1);
  return truncateBytes(build(top), maxBytes);
}
