/**
 * One SNS message from AMP's alert manager → one Alertmanager webhook message (payload version 4),
 * which then runs through the same pipeline as a webhook POST.
 *
 * The body is recognised by its content, not by a setting: JSON (the shipped template, or AMP's
 * documented JSON template: `json-body.ts`) when it starts with `{`, else the default text
 * (`default-text.ts`). AMP's message attributes are read: `truncated=true` (AMP cut the body at
 * 256 KB, or replaced a body that was not UTF-8) and `modified` (what AMP changed, in words) shape the
 * parse and are kept with an unparsed message; attributes of one's own (`sns_configs.attributes`) are
 * only logged.
 *
 * A body that neither parser reads is not dropped: it becomes one firing alert
 * `AMPUnparsedMessage` whose `description` is the raw text (cut to {@link MAX_RAW_BYTES}; channels cut
 * it further to their own limits), so it reaches the channels like any alert. Its labels carry the SNS
 * `MessageId`: Lambda's retries of the same message dedupe, two different messages never do.
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-validation-truncation.html
 * @see https://docs.aws.amazon.com/lambda/latest/dg/with-sns.html
 */
import { GO_ZERO_TIME, webhookSchema, type WebhookMessage } from '../alertmanager/schema.js';
import { truncateBytes } from '../core/truncate.js';
import { parseDefaultText } from './default-text.js';
import { parseJsonBody, syntheticGroupKey } from './json-body.js';

/** `alertname` of the alert an unparsable body is delivered as. */
export const UNPARSED_ALERTNAME = 'AMPUnparsedMessage';
/** Raw text kept in an unparsed alert's `description`, UTF-8 bytes (the pipeline's per-field limit, `MAX_FIELD_BYTES`). */
export const MAX_RAW_BYTES = 16 * 1024;

/** What an SNS message from AMP carries that the conversion reads. */
export interface AmpMessage {
  messageId: string;
  topicArn: string;
  /** SNS `Timestamp`, RFC 3339: when AMP published it. */
  publishedAt: string;
  subject?: string;
  body: string;
  /** Message attributes, name → string value. */
  attributes: Record<string, string>;
}

/** How the body was read: `json`, `text` (the default template), or `unparsed` (delivered as raw text). */
export type AmpBodyKind = 'json' | 'text' | 'unparsed';

export interface AmpConversion {
  kind: AmpBodyKind;
  message: WebhookMessage;
  /** AMP marked the body cut or replaced (attribute `truncated=true`). */
  truncated: boolean;
  /** Alerts the cut lost (also in `message.truncatedAlerts`). */
  lost: number;
  /** Why it was not parsed (`unparsed` only). */
  reason?: string;
}

/**
 * Converts one AMP message. Never throws: what cannot be parsed is converted to an unparsed alert.
 * @example convertAmpMessage(fromSnsRecord(event.Records[0]))
 */
export function convertAmpMessage(m: AmpMessage): AmpConversion {
  const truncated = m.attributes.truncated === 'true';
  const receiver = topicName(m.topicArn);
  const json = m.body.trimStart().startsWith('{');
  const parsed = parseBody(m, { json, truncated, receiver });
  if (parsed.ok) return { kind: json ? 'json' : 'text', message: parsed.message, truncated, lost: parsed.lost };
  return {
    kind: 'unparsed',
    message: unparsedMessage(m, receiver, parsed.reason),
    truncated,
    lost: 0,
    reason: parsed.reason,
  };
}

/**
 * The body read as the shipped JSON template or AMP's default text; a parser that throws (a bug, or an input
 * beyond its bounds) is a body not parsed, so the message is still delivered whole.
 */
function parseBody(
  m: AmpMessage,
  { json, truncated, receiver }: { json: boolean; truncated: boolean; receiver: string },
): ReturnType<typeof parseJsonBody> | ReturnType<typeof parseDefaultText> {
  try {
    return json
      ? parseJsonBody(m.body, truncated)
      : parseDefaultText(m.body, { truncated, subject: m.subject, publishedAt: m.publishedAt, receiver });
  } catch (err) {
    return { ok: false, reason: `the parser failed: ${(err as Error).message}` };
  }
}

/** The one-alert group an unparsable body is delivered as. */
function unparsedMessage(m: AmpMessage, receiver: string, reason: string): WebhookMessage {
  const labels = { alertname: UNPARSED_ALERTNAME, source: 'amp', sns_message_id: m.messageId };
  const annotations: Record<string, string> = {
    summary: `Unparsed alert from AMP${m.subject ? `: ${m.subject}` : ''}`,
    description: m.body === '' ? '(empty message)' : truncateBytes(m.body, MAX_RAW_BYTES),
    parse_error: reason,
    sns_topic_arn: m.topicArn,
  };
  if (Object.keys(m.attributes).length)
    annotations.sns_message_attributes = Object.entries(m.attributes)
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
  return webhookSchema.parse({
    version: '4',
    groupKey: syntheticGroupKey(receiver, { alertname: UNPARSED_ALERTNAME }),
    status: 'firing',
    receiver,
    groupLabels: { alertname: UNPARSED_ALERTNAME },
    commonLabels: labels,
    commonAnnotations: annotations,
    externalURL: '',
    alerts: [
      { status: 'firing', labels, annotations, startsAt: m.publishedAt, endsAt: GO_ZERO_TIME, generatorURL: '' },
    ],
  });
}

/** `amp-alerts` of `arn:aws:sns:eu-west-1:123456789012:amp-alerts` (the receiver name of a text body). */
function topicName(arn: string): string {
  return arn.slice(arn.lastIndexOf(':') + 1) || 'amp';
}
