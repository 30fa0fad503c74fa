/**
 * AWS SNS: one `Publish` per notification to a topic, with a short ASCII subject (email
 * subscribers), the plain-text message and filterable message attributes.
 * @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 */
import { createHash } from 'node:crypto';
import { PublishCommand, type PublishCommandInput, type MessageAttributeValue, type SNSClient } from '@aws-sdk/client-sns';
import type { Notification } from '../notification.js';
import { headline } from './content.js';
import { renderText } from './text.js';
import { DeliveryError, type Channel } from './types.js';

/** `Subject` length, characters (ASCII, no line breaks or control characters). @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html */
export const SNS_MAX_SUBJECT_CHARS = 100;
/** `Message` plus message attributes, UTF-8 bytes (256 KiB). @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html */
export const SNS_MAX_MESSAGE_BYTES = 262_144;

/** Error names of SNS throttling, whatever the HTTP status. */
const THROTTLING = new Set(['ThrottledException', 'Throttled', 'Throttling', 'ThrottlingException', 'KMSThrottlingException', 'TooManyRequestsException', 'RequestLimitExceeded']);
/** Names of SDK errors raised before any reply: time-outs and aborts. */
const TRANSIENT = new Set(['TimeoutError', 'AbortError', 'RequestTimeout', 'RequestTimeoutException']);
/** Node socket error codes of a failed request. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * The subject: `[FIRING:2] VLLMQueueBacklog warning`, reduced to printable ASCII (other
 * characters dropped, line breaks and tabs turned into spaces, runs of spaces collapsed) and cut to
 * {@link SNS_MAX_SUBJECT_CHARS}. Never empty: the status prefix is always there.
 */
export function snsSubject(notification: Notification): string {
  const h = headline(notification);
  const raw = `[${h.status.toUpperCase()}:${h.count}] ${h.alertname} ${h.severity}`;
  const ascii = raw.replace(/[\t\r\n\v\f]/g, ' ').replace(/[^\x20-\x7e]/g, '').replace(/ {2,}/g, ' ').trim();
  return ascii.slice(0, SNS_MAX_SUBJECT_CHARS).trimEnd();
}

/** `severity`, `alertname`, `status` as String attributes; empty values are left out (SNS rejects them). */
export function snsAttributes(notification: Notification): Record<string, MessageAttributeValue> {
  const h = headline(notification);
  const attributes: Record<string, MessageAttributeValue> = {};
  for (const [name, value] of [['severity', h.severity], ['alertname', h.alertname], ['status', h.status]] as const) {
    if (value) attributes[name] = { DataType: 'String', StringValue: value };
  }
  return attributes;
}

function attributeBytes(attributes: Record<string, MessageAttributeValue>): number {
  return Object.entries(attributes).reduce(
    (sum, [name, v]) => sum + Buffer.byteLength(name + (v.DataType ?? '') + (v.StringValue ?? ''), 'utf8'),
    0,
  );
}

/**
 * Renders the `Publish` input. The message is {@link renderText} cut (by whole alerts) to the size
 * limit. FIFO topics (`.fifo`) get a `MessageGroupId` per Alertmanager group and a content-based
 * `MessageDeduplicationId`, which FIFO topics require.
 * @param topicArn `arn:aws:sns:REGION:ACCOUNT:NAME`
 */
export function renderSns(notification: Notification, topicArn: string): PublishCommandInput {
  const MessageAttributes = snsAttributes(notification);
  const Message = renderText(notification, SNS_MAX_MESSAGE_BYTES - attributeBytes(MessageAttributes));
  const input: PublishCommandInput = { TopicArn: topicArn, Subject: snsSubject(notification), Message, MessageAttributes };
  if (topicArn.endsWith('.fifo')) {
    input.MessageGroupId = sha256(notification.groupKey).slice(0, 64);
    input.MessageDeduplicationId = sha256(Message).slice(0, 64);
  }
  return input;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * The region of a topic ARN (`arn:aws:sns:eu-west-1:123456789012:alerts` → `eu-west-1`). SNS topics
 * are regional, so this region is where `Publish` must go.
 * @throws Error when the ARN has no region field
 */
export function regionFromTopicArn(topicArn: string): string {
  const region = topicArn.split(':')[3];
  if (!region) throw new Error('SNS topic ARN has no region (expected arn:aws:sns:REGION:ACCOUNT:NAME)');
  return region;
}

/**
 * Maps an SDK error: throttling, server faults (5xx), 429, time-outs and network errors are
 * retryable; every other service error (bad parameter, authorisation, missing topic) is permanent.
 */
export function classifySnsError(err: unknown): DeliveryError {
  const e = (err ?? {}) as { name?: string; code?: string; $fault?: string; $metadata?: { httpStatusCode?: number }; message?: string };
  const name = e.name ?? 'Error';
  const status = e.$metadata?.httpStatusCode;
  const retryable =
    THROTTLING.has(name) ||
    TRANSIENT.has(name) ||
    e.$fault === 'server' ||
    status === 429 ||
    (status !== undefined && status >= 500) ||
    (e.code !== undefined && NETWORK_CODES.has(e.code));
  const detail = status !== undefined ? `${name} (HTTP ${status})` : name;
  return new DeliveryError(`sns: ${detail}: ${String(e.message ?? '').slice(0, 200)}`, retryable);
}

/**
 * The SNS channel. The client should be created with `maxAttempts: 1`: the pipeline owns retries.
 * @param options.client an `SNSClient` for the topic's region
 * @param options.topicArn the topic to publish to
 */
export function createSnsChannel(options: { client: SNSClient; topicArn: string }): Channel {
  return {
    name: 'sns',
    async send(notification, signal) {
      try {
        await options.client.send(new PublishCommand(renderSns(notification, options.topicArn)), { abortSignal: signal });
      } catch (err) {
        throw classifySnsError(err);
      }
    },
  };
}
