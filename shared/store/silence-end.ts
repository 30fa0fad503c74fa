/**
 * When the silence that came with an occurrence's acknowledgement ends, as the dedupe ledger reads it
 * from the alert record (`ack.silenceEndsAt`, written by `AlertRecordStore.setSilence`). Alertmanager
 * sends no notification for a silenced alert, so a firing sent again once the silence is over is the
 * alert still firing after it: announced again (`occurrence.ts`, step `renew`), not a duplicate of the
 * acknowledged firing.
 */
import type { Head } from './occurrence.js';
import { normaliseTime } from './keys.js';
import type { RecordView } from './seen.js';

/** What the dedupe ledger reads of an alert record for it. */
export type RecordSilence = Pick<RecordView, 'startsAt' | 'generation' | 'ack' | 'expiresAt'>;

/**
 * The head with `silenceEndsAtMs` set when the record's acknowledgement, of this occurrence and this
 * generation, came with a silence; the head unchanged otherwise (an acknowledgement without a silence
 * holds until the occurrence resolves).
 * @param nowMs epoch milliseconds (an expired record is absent)
 */
export function withSilenceEnd<H extends Head>(
  head: H,
  alert: { startsAt: string },
  record: Partial<RecordSilence> | undefined,
  nowMs: number,
): H {
  const endsAt = record?.ack?.silenceEndsAt;
  if (!endsAt || !record?.startsAt || (record.expiresAt ?? 0) * 1000 <= nowMs) return head;
  if (record.startsAt !== normaliseTime(alert.startsAt) || (record.generation ?? 0) !== head.generation) return head;
  const endsAtMs = Date.parse(endsAt);
  return Number.isNaN(endsAtMs) ? head : { ...head, silenceEndsAtMs: endsAtMs };
}
