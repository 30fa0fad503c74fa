/**
 * Cutting an alert down to what every store and platform takes, visibly, so that one bad alert never
 * blocks its group:
 * - before fan-out, each label and annotation value over {@link MAX_FIELD_BYTES} is cut, and text that
 *   is not well-formed Unicode (lone surrogates, which `encodeURIComponent` and UTF-8 encoders refuse) is
 *   repaired, so the same reduced alert is rendered by every channel and stored in its ack record;
 * - after a platform refused a message's content, the one retry sends {@link reduceNotification}: every
 *   value cut to {@link REDUCED_FIELD_BYTES}, control and bidi-override characters removed, links that
 *   are not plain http(s) URLs dropped.
 * A changed value ends in `… (cut)` (or ` (cut)` when only repaired) and its field is named in the
 * alert's `cut`, which channels show under the title and which keeps a silence link (or a silence)
 * from being made of labels that are no longer the alert's own.
 */
import type { Alert } from '../alertmanager/schema.js';
import type { EnrichedAlert, Enrichment } from '../enrich/types.js';
import type { Logger } from '../core/logger.js';
import type { Notification } from './notification.js';
import { truncateBytes, utf8Bytes } from '../core/truncate.js';

/** Marks a value that is not as Alertmanager sent it. */
export const CUT_MARK = '(cut)';
/**
 * Largest label or annotation value sent and stored whole, UTF-8 bytes. Slack and Feishu show 3,000
 * characters per alert and an SNS message holds 256 KiB for the whole group: a longer value is a
 * mistake (a dump in an annotation), and kept whole it made the ack record exceed DynamoDB's 400 KB.
 */
export const MAX_FIELD_BYTES = 16 * 1024;
/** Value size in the reduced rendering sent after a platform refused the full one, UTF-8 bytes. */
export const REDUCED_FIELD_BYTES = 512;

/** An alert some of whose fields were cut: `cut` names them (`annotations.description`, `labels.pod`, `generatorURL`). */
export type CutAlert<A extends Alert = Alert> = A & { cut?: string[] };

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** C0 and C1 controls except tab and line feed, and the bidi overrides and isolates. */
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;
const MARK_BYTES = utf8Bytes(` ${CUT_MARK}`);

/**
 * `value` with lone surrogates replaced by U+FFFD (and, when `strict`, control characters removed),
 * at most `maxBytes` UTF-8 bytes; when anything changed it ends in ` (cut)`.
 * @returns `value` itself when nothing needed changing
 */
export function cutText(value: string, maxBytes: number, strict = false): string {
  let clean = value.replace(LONE_SURROGATE, '\uFFFD');
  if (strict) clean = clean.replace(CONTROL, '');
  if (clean === value && utf8Bytes(value) <= maxBytes) return value;
  return `${truncateBytes(clean, maxBytes - MARK_BYTES)} ${CUT_MARK}`;
}

/**
 * The alert with each label and annotation value (and Grafana's `valueString`) passed through {@link cutText};
 * a link (`generatorURL`, Grafana's `silenceURL`, `dashboardURL`, `panelURL`, `imageURL`) over `maxBytes`
 * (or, when `strict`, not a plain http(s) URL) is dropped. The fingerprint, `startsAt` and
 * status, which name the alert, are never changed.
 * @returns `alert` itself when nothing was cut
 */
export function cutAlert<A extends Alert>(alert: CutAlert<A>, maxBytes: number, strict = false): CutAlert<A> {
  const cut = new Set(alert.cut);
  const limits = { cut, maxBytes, strict };
  const labels = cutValues(alert.labels, 'labels', limits);
  const annotations = cutValues(alert.annotations, 'annotations', limits);
  if (strict && annotations.runbook_url && !isPlainUrl(annotations.runbook_url, maxBytes))
    cut.add('annotations.runbook_url');
  const urls = Object.fromEntries(
    URL_FIELDS.flatMap((field) => {
      const url = alert[field];
      if (!url || (strict ? isPlainUrl(url, maxBytes) : utf8Bytes(url) <= maxBytes && cutText(url, maxBytes) === url))
        return [];
      cut.add(field);
      return [[field, '']];
    }),
  );
  const valueString = alert.valueString && cutText(alert.valueString, maxBytes, strict);
  if (valueString !== alert.valueString) cut.add('valueString');
  if (cut.size === (alert.cut?.length ?? 0)) return alert;
  return { ...alert, labels, annotations, ...urls, ...(valueString !== undefined && { valueString }), cut: [...cut] };
}

/** The alert's links, Alertmanager's and Grafana's: one that is too long or not plain is dropped, not cut. */
const URL_FIELDS = ['generatorURL', 'silenceURL', 'dashboardURL', 'panelURL', 'imageURL'] as const;

/**
 * `values` with each value passed through {@link cutText}; each one cut is added to `cut` as `field.name`.
 * @returns `values` itself when nothing was cut
 */
function cutValues(
  values: Record<string, string>,
  field: 'labels' | 'annotations',
  { cut, maxBytes, strict }: { cut: Set<string>; maxBytes: number; strict: boolean },
): Record<string, string> {
  let out = values;
  for (const [name, value] of Object.entries(values)) {
    const reduced = cutText(value, maxBytes, strict);
    if (reduced === value) continue;
    if (out === values) out = { ...values };
    out[name] = reduced;
    cut.add(`${field}.${name}`);
  }
  return out;
}

/** An absolute http(s) URL without spaces or control characters, at most `maxBytes`. */
function isPlainUrl(url: string, maxBytes: number): boolean {
  return (
    utf8Bytes(url) <= maxBytes &&
    /^https?:\/\/[^\s\u0000-\u001F\u007F-\u009F]+$/i.test(url) &&
    cutText(url, maxBytes) === url
  );
}

/** Whether the alert's labels were changed (a silence of them would not match the alert). */
export const labelsCut = (alert: CutAlert): boolean => (alert.cut ?? []).some((f) => f.startsWith('labels.'));

/**
 * The pipeline's step before fan-out: {@link cutAlert} at {@link MAX_FIELD_BYTES}, logged (warn) with
 * the fields it cut, naming the alert.
 */
export function cutOversized<A extends Alert>(alert: A, log: Logger): CutAlert<A> {
  const reduced = cutAlert(alert, MAX_FIELD_BYTES);
  if (reduced !== alert)
    log.warn('alert cut', { fingerprint: alert.fingerprint, alertname: alert.labels.alertname, fields: reduced.cut });
  return reduced;
}

/**
 * The notification as sent on the one retry after a platform refused its content: every alert cut
 * strictly to {@link REDUCED_FIELD_BYTES} (see the header), the group's labels and annotations too;
 * an `externalURL` that is not a plain http(s) URL dropped (no silence links). Our own text (enrichment
 * values, times, the Acknowledge link) is kept; an enrichment's reason, which may quote a reply, is cut.
 * Marked `reduced`: channels then leave out their @-mentions (an unknown user id refuses a Feishu card).
 */
export function reduceNotification(n: Notification): Notification {
  const text = (v: string) => cutText(v, REDUCED_FIELD_BYTES, true);
  const values = (r: Record<string, string>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, text(v)]));
  return {
    ...n,
    reduced: true,
    groupKey: text(n.groupKey),
    receiver: text(n.receiver),
    groupLabels: values(n.groupLabels),
    commonLabels: values(n.commonLabels),
    commonAnnotations: values(n.commonAnnotations),
    externalURL: isPlainUrl(n.externalURL, REDUCED_FIELD_BYTES) ? n.externalURL : '',
    // No chart: a platform that refused the message may have failed to fetch the image (Slack's `invalid_blocks`).
    alerts: n.alerts.map(
      ({ chartUrl: _chart, ...a }): EnrichedAlert => ({
        ...cutAlert(a, REDUCED_FIELD_BYTES, true),
        enrichment: reduceEnrichment(a.enrichment, text),
        ...(a.acknowledgement && { acknowledgement: { ...a.acknowledgement, by: text(a.acknowledgement.by) } }),
      }),
    ),
  };
}

function reduceEnrichment(e: Enrichment, text: (v: string) => string): Enrichment {
  if (e.status !== 'unavailable') return e;
  return { ...e, reason: text(e.reason), ...(e.reasonZh !== undefined && { reasonZh: text(e.reasonZh) }) };
}
