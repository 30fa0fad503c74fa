/**
 * Whether a Lambda event is an SNS event, apart from the SNS event's schema (`sns-event.ts`): the
 * receiver asks it of every event, and a Function URL-only deployment need not build the schema at cold init.
 */
import type { SNSEvent } from 'aws-lambda';

/** Whether a Lambda event is SNS's (its first record says `EventSource: aws:sns`); Function URL and scheduler events are not. */
export function isSnsEvent(event: unknown): event is SNSEvent {
  const records = (event as { Records?: unknown } | null | undefined)?.Records;
  return Array.isArray(records) && (records[0] as { EventSource?: unknown } | undefined)?.EventSource === 'aws:sns';
}
