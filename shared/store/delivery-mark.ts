/**
 * The delivery mark: how one write records both an alert's delivery and its alert record.
 *
 * An alert event's ledger is its occurrence's head (`head-item.ts`): the claim writes `pending` (the
 * channels to send to) and a lease. Once every claimed channel accepted the event, the pipeline no
 * longer writes the head: the alert record's write (`alert#<fingerprint>`, which it makes anyway)
 * carries `deliveredEvent`, the event's key. A reader that finds the record's mark naming the head's
 * event reads the head as delivered (nothing pending). So a new alert costs its claim and one write
 * after delivery, not a ledger write and a record write.
 *
 * A partial delivery (a channel failed, or had not answered yet when another's success was written) goes to the head
 * (`DedupeStore.markDelivered`), and heads and records written before the mark existed read as before:
 * no mark, the head's own ledger. A record that has moved on to a later occurrence (`startsAt`) means
 * the earlier occurrence is over: its head has nothing left to deliver (else a lagging peer's copy of
 * it, after its lease ran out, would be repaired to every channel after the newer firing).
 */
import { generationKey, normaliseTime } from './keys.js';
import type { Head } from './occurrence.js';
import type { RecordView } from './seen.js';

/**
 * The head with the record's mark applied: `pending` emptied when the mark names the head's event, or
 * when the record belongs to a later occurrence. `marked` says the item's own `pending` is stale, so
 * a conditional write must not require it absent (it compares the lease read instead).
 * @param nowMs epoch milliseconds (an expired record is absent)
 */
export function applyMark(
  head: Head,
  alert: { fingerprint: string; startsAt: string },
  record: RecordView | undefined,
  nowMs: number,
): Head & { marked?: true } {
  if (head.pending.length === 0 || !record?.startsAt || (record.expiresAt ?? 0) * 1000 <= nowMs) return head;
  const event = generationKey({ ...alert, status: head.state }, head.generation);
  const later = record.startsAt > normaliseTime(alert.startsAt);
  return record.deliveredEvent === event || later ? { ...head, pending: [], marked: true } : head;
}
