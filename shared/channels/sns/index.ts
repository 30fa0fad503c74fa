/**
 * AWS SNS: one `Publish` per notification to a topic (the message itself is built in
 * `sns-message.ts`), and the mapping of SDK errors to retryable or permanent failures.
 * @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 */
import { PublishCommand, type SNSClient } from '@aws-sdk/client-sns';
import type { RenderOptions } from '../../render/digest.js';
import { renderSns, type SnsMessageStructure } from './message.js';
import {
  ContentRefusedError,
  DeliveryError,
  httpFailureReason,
  UNKNOWN_OUTCOME_MESSAGE,
  type Channel,
} from '../channel.js';
import { redactedExcerpt } from '../../core/secret.js';

export {
  renderSns,
  snsSubject,
  SNS_MAX_MESSAGE_BYTES,
  SNS_MAX_SUBJECT_CHARS,
  type SnsMessageStructure,
} from './message.js';

/** Error names of SNS throttling, whatever the HTTP status. */
const THROTTLING = new Set([
  'ThrottledException',
  'Throttled',
  'Throttling',
  'ThrottlingException',
  'KMSThrottlingException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
]);
/** Names of SDK errors raised before any reply: time-outs and aborts. */
const TRANSIENT = new Set(['TimeoutError', 'AbortError', 'RequestTimeout', 'RequestTimeoutException']);
/** Error names of a refused parameter; a refusal of the message's own parameters is about its content. */
const INVALID_PARAMETER = new Set([
  'InvalidParameterException',
  'InvalidParameterValueException',
  'InvalidParameter',
  'InvalidParameterValue',
]);
const MESSAGE_PARAMETER = /\b(Message|Subject|MessageAttributes?|MessageStructure)\b/;
/** Node socket error codes of a failed request. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

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
 * retryable; every other service error (bad parameter, authorisation, missing topic) is permanent, and
 * a {@link ContentRefusedError} when SNS refused the message's own parameters (`Invalid parameter:
 * Message too long`, `…: Subject`) or the SDK could not encode them (`URIError`).
 * @param channel the channel instance, prefixed to the message
 */
export function classifySnsError(err: unknown, channel = 'sns'): DeliveryError {
  const e = (err ?? {}) as {
    name?: string;
    code?: string;
    $fault?: string;
    $metadata?: { httpStatusCode?: number };
    message?: string;
  };
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
  const reason =
    status !== undefined
      ? httpFailureReason(status)
      : THROTTLING.has(name)
        ? 'rate_limited'
        : e.code !== undefined && NETWORK_CODES.has(e.code)
          ? 'network'
          : retryable
            ? 'server_error'
            : 'client_error';
  const message = `${channel}: ${detail}: ${redactedExcerpt(String(e.message ?? ''), 200)}`;
  const content =
    name === 'URIError' || (INVALID_PARAMETER.has(name) && MESSAGE_PARAMETER.test(String(e.message ?? '')));
  return content && !retryable
    ? new ContentRefusedError(message)
    : new DeliveryError(message, { retryable, reason, cause: err });
}

/**
 * The SNS channel. The client should be created with `maxAttempts: 1`: the pipeline owns retries.
 * Errors start with the channel's name (`sns-oncall: NotFoundException (HTTP 404): …`).
 * @param options.client an `SNSClient` for the topic's region
 * @param options.topicArn the topic to publish to
 * @param options.name the instance name recorded in the ledger; default `sns`
 * @param options.locale default `en`
 * @param options.messageStructure `json` for per-protocol bodies (see {@link SnsMessageStructure})
 */
export function createSnsChannel(
  options: {
    client: SNSClient;
    topicArn: string;
    name?: string;
    messageStructure?: SnsMessageStructure;
  } & RenderOptions,
): Channel {
  const name = options.name ?? 'sns';
  const render = {
    locale: options.locale ?? 'en',
    digestAbove: options.digestAbove,
    messageStructure: options.messageStructure,
  };
  return {
    name,
    locale: render.locale,
    async send(notification, signal) {
      try {
        await options.client.send(new PublishCommand(renderSns(notification, options.topicArn, render)), {
          abortSignal: signal,
        });
      } catch (err) {
        throw signal.aborted && TRANSIENT.has((err as Error)?.name)
          ? // The SDK does not say whether SNS had the request when the signal fired: it may have published it.
            new DeliveryError(`${name}: ${UNKNOWN_OUTCOME_MESSAGE}`, {
              retryable: true,
              reason: 'timeout',
              cause: err,
              outcomeUnknown: true,
            })
          : classifySnsError(err, name);
      }
    },
  };
}
