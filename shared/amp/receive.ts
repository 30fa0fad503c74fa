/**
 * The receiving end of AMP via SNS: each SNS message from AMP's alert manager is converted
 * (`convert.ts`) and runs through the same steps as a webhook POST: alerts counted, heartbeats taken
 * out, then `processGroup` (dedupe, enrichment, routing, channels, acknowledgement).
 *
 * SNS invokes the function asynchronously, so a thrown error is the only way to ask for a retry
 * (Lambda retries an async event twice, then sends it to the on-failure destination, where an alarm
 * calls a person): "never lose an alert quietly" decides what throws.
 * - Transient, thrown (retried; the dedupe ledger makes a retry send only what is still missing): the
 *   dedupe store or heartbeat store unreachable, a channel that failed after its retries, alerts in
 *   flight in another delivery, an event that is not a well-formed SNS event (kept by the failure
 *   destination, for a person to read).
 * - Permanent, not thrown: a body that cannot be parsed (delivered as raw text, counted in
 *   `amp_messages_total{body="unparsed"}`, logged as an error); content a platform refused (logged by
 *   the pipeline, as for the webhook). A retry would meet the same answer.
 */
import type { SNSEvent } from 'aws-lambda';
import { takeHeartbeats, type HeartbeatReceiver } from '../heartbeat/receive.js';
import { noMetrics } from '../metrics/catalogue.js';
import { processGroup, type GroupResult, type PipelineDeps } from '../pipeline/index.js';
import { convertAmpMessage, type AmpBodyKind, type AmpMessage } from './convert.js';
import { ampMessages } from './sns-event.js';

export interface AmpDeps extends PipelineDeps {
  /** The dead-man's switch, as for the webhook; unset: off. */
  heartbeat?: HeartbeatReceiver;
}

/** What became of one SNS message (the handler's return value, for the logs). */
export interface AmpOutcome {
  messageId: string;
  body: AmpBodyKind;
  /** Alerts the cut lost (AMP truncated the message). */
  lost: number;
  /** Absent when only heartbeats were in it. */
  result?: GroupResult;
}

/** Thrown so that Lambda retries the SNS event: something transient kept an alert from a channel. */
export class AmpRetryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AmpRetryError';
  }
}

/** Characters of an unparsed body put in its error log line (the whole body goes to the channels). */
const PREVIEW_CHARS = 200;

/**
 * Runs every message of an SNS event through the pipeline, in order.
 * @throws AmpRetryError when a channel failed after its retries or alerts are in flight elsewhere
 * @throws the store's error when DynamoDB is unreachable, and an Error naming the field of a malformed event
 */
export async function receiveSnsEvent(event: SNSEvent, deps: AmpDeps): Promise<AmpOutcome[]> {
  const outcomes: AmpOutcome[] = [];
  for (const message of readEvent(event, deps)) {
    try {
      outcomes.push(await receiveOne(message, deps));
    } catch (err) {
      deps.logger.error('AMP message not delivered', {
        snsMessageId: message.messageId,
        error: err as Error,
        detail: RETRIED,
      });
      throw err;
    }
  }
  return outcomes;
}

/** What happens to an event the handler throws for (the function's async invoke configuration). */
const RETRIED =
  "Lambda retries the event twice, then keeps it in the receiver's failed-events queue (an alarm watches its depth)";

function readEvent(event: SNSEvent, deps: AmpDeps): AmpMessage[] {
  try {
    return ampMessages(event);
  } catch (err) {
    deps.logger.error('SNS event refused', { error: err as Error, detail: RETRIED });
    throw err;
  }
}

/**
 * One SNS message: converted to a webhook message (logged as received, unparsed or truncated), its
 * heartbeats taken out, the rest sent as one group, then the heartbeats recorded.
 * @throws AmpRetryError when a channel failed: Lambda retries the message, and the retry sends only what is missing
 */
async function receiveOne(m: AmpMessage, deps: AmpDeps): Promise<AmpOutcome> {
  const conversion = convertAmpMessage(m);
  logConversion(m, conversion, deps);
  const { rest, record } = takeHeartbeats(
    conversion.message,
    deps.heartbeat,
    conversion.message.externalURL || `amp:${m.topicArn}`,
  );
  const outcome: AmpOutcome = { messageId: m.messageId, body: conversion.kind, lost: conversion.lost };
  if (rest) outcome.result = await processGroup(rest, deps);
  if (outcome.result && !outcome.result.ok)
    throw new AmpRetryError(
      `SNS message ${m.messageId}: ${retryReason(outcome.result)}; Lambda retries it, and the retry sends only what is missing`,
    );
  // After the rest went out: a heartbeat the store cannot record (thrown: Lambda retries) never holds back its group.
  await record();
  return outcome;
}

/** Counts the message and its alerts, and says what became of it: received, not parsed (sent as raw text), truncated by AMP. */
function logConversion(m: AmpMessage, conversion: ReturnType<typeof convertAmpMessage>, deps: AmpDeps): void {
  const log = deps.logger.child({ snsMessageId: m.messageId, topicArn: m.topicArn });
  const metrics = deps.metrics ?? noMetrics;
  metrics.inc('amp_messages_total', { body: conversion.kind });
  metrics.inc('alerts_received_total', {}, conversion.message.alerts.length);
  const facts = {
    body: conversion.kind,
    alerts: conversion.message.alerts.length,
    bytes: Buffer.byteLength(m.body),
    attributes: m.attributes,
  };
  if (conversion.kind === 'unparsed') {
    log.error('AMP message not parsed', {
      ...facts,
      reason: conversion.reason,
      subject: m.subject,
      preview: m.body.slice(0, PREVIEW_CHARS),
      detail: `delivered as raw text in an ${conversion.message.alerts[0]!.labels.alertname} alert`,
    });
  } else log.info('AMP message received', facts);
  if (conversion.truncated || conversion.lost > 0) {
    log.warn('AMP message truncated', {
      lost: conversion.lost,
      modified: m.attributes.modified,
      detail:
        'AMP cut the message at 256 KB: the alerts that arrived whole are delivered, the rest are shown as left out',
    });
  }
}

function retryReason(result: GroupResult): string {
  const failed = Object.entries(result.channels)
    .filter(([, o]) => o.status === 'failed')
    .map(([name]) => name);
  return failed.length
    ? `channel ${failed.join(', ')} failed after its retries`
    : `${result.inFlight} alert(s) in flight in another delivery`;
}
