/**
 * The SNS `Publish` input for a notification: an ASCII subject (email subscribers), the plain-text
 * message or per-protocol bodies (`MessageStructure: json`), filterable message attributes, and for
 * FIFO topics the group and deduplication ids.
 * @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 */
import { createHash } from 'node:crypto';
import type { MessageAttributeValue, PublishCommandInput } from '@aws-sdk/client-sns';
import { generationKey } from '../../store/keys.js';
import type { Notification } from '../../render/notification.js';
import { alertTitle, headline } from '../../render/content.js';
import { isStorm, summarize, type RenderOptions } from '../../render/digest.js';
import { count, messages } from '../../render/locale.js';
import { renderText } from '../../render/text.js';
import { truncateChars, utf8Bytes } from '../../core/truncate.js';

/** `Subject` length, characters (ASCII, no line breaks or control characters). @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html */
export const SNS_MAX_SUBJECT_CHARS = 100;
/** `Message` plus message attributes, UTF-8 bytes (256 KiB). @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html */
export const SNS_MAX_MESSAGE_BYTES = 262_144;
/** One SMS: 140 ASCII characters (160 GSM, 70 UCS-2); SNS splits longer ones. @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html */
export const SNS_SMS_MAX_CHARS = 140;

/**
 * How a topic's messages are shaped:
 * - `string` (default): one plain-text `Message` for every protocol, with message attributes;
 * - `json`: `MessageStructure: json` with a `default` and `email` body (the full text) and an
 *   `sms` body of at most {@link SNS_SMS_MAX_CHARS} characters. SNS does not deliver message
 *   attributes to subscribers of a JSON-structured message (they are still sent and counted).
 */
export type SnsMessageStructure = 'string' | 'json';

export interface SnsRenderOptions extends RenderOptions {
  messageStructure?: SnsMessageStructure;
}

/**
 * The subject: `[FIRING:2] VLLMQueueBacklog warning` (`[FLAPPING:1] …` when every firing alert
 * flaps), always in English, reduced to printable ASCII (other characters dropped, line breaks and
 * tabs turned into spaces, runs of spaces collapsed) and cut to {@link SNS_MAX_SUBJECT_CHARS}.
 * Never empty: the status prefix is always there.
 */
export function snsSubject(notification: Notification): string {
  const h = headline(notification);
  const flapping = h.status === 'firing' && h.count > 0 && h.flapping === h.count;
  const status =
    h.kind === 'escalation'
      ? 'UNACKNOWLEDGED'
      : h.kind === 'acknowledged'
        ? 'ACKNOWLEDGED'
        : flapping
          ? 'FLAPPING'
          : h.status.toUpperCase();
  const raw = `[${status}:${h.count}] ${h.alertname} ${h.severity}`;
  const ascii = raw
    .replace(/[\t\r\n\v\f]/g, ' ')
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/ {2,}/g, ' ')
    .trim();
  return ascii.slice(0, SNS_MAX_SUBJECT_CHARS).trimEnd();
}

/**
 * `severity`, `alertname`, `status` as String attributes, and `flapping: "true"` when an alert
 * flaps (a subscription filter policy `{"flapping": [{"exists": false}]}` keeps those off a pager).
 * Empty values are left out (SNS rejects them).
 */
export function snsAttributes(notification: Notification): Record<string, MessageAttributeValue> {
  const h = headline(notification);
  const attributes: Record<string, MessageAttributeValue> = {};
  // `kind` (acknowledged, escalation) lets a filter policy keep follow-ups off a pager.
  const pairs = [
    ['severity', h.severity],
    ['alertname', h.alertname],
    ['status', h.status],
    ['flapping', h.flapping ? 'true' : ''],
    ['kind', h.kind ?? ''],
  ] as const;
  for (const [name, value] of pairs) {
    if (value) attributes[name] = { DataType: 'String', StringValue: value };
  }
  return attributes;
}

/** Size SNS counts for attributes: name, data type and value of each, UTF-8 bytes. */
export function attributeBytes(attributes: Record<string, MessageAttributeValue>): number {
  return Object.entries(attributes).reduce(
    (sum, [name, v]) => sum + utf8Bytes(name + (v.DataType ?? '') + (v.StringValue ?? '')),
    0,
  );
}

/**
 * The SMS body: status, severity, alert name (`Alert storm` for a digest) and count with the alerts
 * Alertmanager left out, then the most severe alert's title, cut to {@link SNS_SMS_MAX_CHARS}
 * characters. No emoji (one would force UCS-2 and halve the length).
 */
export function smsText(notification: Notification, options: RenderOptions = {}): string {
  const t = messages(options.locale);
  const h = headline(notification);
  const total = notification.alerts.length + notification.truncatedAlerts;
  const name = isStorm(notification, options.digestAbove) ? t.digest.title : h.alertname || t.alerts;
  const head = [t[h.status], h.severity, `${name} (${count(total)})`].filter(Boolean).join(' ');
  const [top] = summarize(notification, 1).top;
  return truncateChars(top ? `${head}: ${alertTitle(top)}` : head, SNS_SMS_MAX_CHARS);
}

/**
 * Renders the `Publish` input within {@link SNS_MAX_MESSAGE_BYTES}, attributes included. FIFO
 * topics (`.fifo`) get a `MessageGroupId` per Alertmanager group (so firing → resolved keep their
 * order) and a `MessageDeduplicationId` from the dedupe keys of the alert events in the message,
 * so a retry of the same events within SNS's 5-minute window is dropped by SNS too.
 * @param topicArn `arn:aws:sns:REGION:ACCOUNT:NAME`
 * @param options.locale default `en`; the subject is always English (it must be ASCII)
 */
export function renderSns(
  notification: Notification,
  topicArn: string,
  options: SnsRenderOptions = {},
): PublishCommandInput {
  const render: RenderOptions = { locale: options.locale ?? 'en', digestAbove: options.digestAbove };
  const MessageAttributes = snsAttributes(notification);
  const budget = SNS_MAX_MESSAGE_BYTES - attributeBytes(MessageAttributes);
  const input: PublishCommandInput = {
    TopicArn: topicArn,
    Subject: snsSubject(notification),
    Message: '',
    MessageAttributes,
  };
  if (options.messageStructure === 'json') {
    input.MessageStructure = 'json';
    input.Message = jsonMessage(notification, budget, render);
  } else {
    input.Message = renderText(notification, budget, render);
  }
  if (topicArn.endsWith('.fifo')) {
    input.MessageGroupId = sha256(notification.groupKey);
    // A follow-up or escalation names the same alert events as the alert message: its kind keeps it from being dropped as a duplicate.
    const kind = notification.kind && notification.kind !== 'alert' ? [notification.kind] : [];
    input.MessageDeduplicationId = sha256(
      [
        ...kind,
        ...notification.alerts.map((a) => generationKey(a, notification.generations?.[a.fingerprint])).sort(),
      ].join('\n'),
    );
  }
  return input;
}

/** `{"default": full, "email": full, "sms": short}` within `budget` bytes after JSON escaping. */
function jsonMessage(notification: Notification, budget: number, render: RenderOptions): string {
  const sms = smsText(notification, render);
  let textBudget = Math.floor((budget - utf8Bytes(JSON.stringify({ default: '', email: '', sms }))) / 2);
  for (;;) {
    const full = renderText(notification, textBudget, render);
    const message = JSON.stringify({ default: full, email: full, sms });
    const over = utf8Bytes(message) - budget;
    if (over <= 0) return message;
    // Escaping (`\n`, `\"`) made it longer than measured: shrink by the overshoot and render again.
    textBudget -= Math.ceil(over / 2) + 16;
  }
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
