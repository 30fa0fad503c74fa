/**
 * DynamoDB adapter of {@link AcknowledgementStore}: the record's `ack` map, set by one conditional write
 * that only the first acknowledgement of a firing occurrence the link covers passes.
 */
import { fromItem, isoTime } from './alert-record-items.js';
import type { RecordTable } from './alert-record-table.js';
import type { Acknowledgement, AckOutcome, AcknowledgementStore, LinkCover } from './alert-record.js';

export class DynamoDbAcknowledgementStore implements AcknowledgementStore {
  constructor(private readonly t: RecordTable) {}

  async acknowledge(fingerprint: string, ack: Acknowledgement, covers: LinkCover, nowMs: number): Promise<AckOutcome> {
    const stored = { by: ack.by, at: ack.at, channel: ack.channel, ...(ack.silenceId && { silenceId: ack.silenceId }) };
    const [starts, refired] = [isoTime(covers.startsAtMs), isoTime(covers.refiredAtMs)];
    const item = await this.t.update(fingerprint, {
      set: { '#ack': stored, '#exp': this.t.expiry(nowMs) },
      // A link covers the occurrence and generation that were firing when it was issued, not a later re-fire,
      // nor an occurrence first notified after it (whatever startsAt another alert of its group claimed).
      condition:
        'attribute_exists(pk) AND #st = :firing AND attribute_not_exists(#ack) AND #s <= :starts AND #n <= :refired AND (attribute_not_exists(#rf) OR #rf <= :refired) AND #exp > :nowSec',
      values: { ':firing': 'firing', ':starts': starts, ':refired': refired, ':nowSec': Math.floor(nowMs / 1000) },
    });
    if (item) return { outcome: 'acknowledged', record: fromItem(item) };
    const current = await this.t.getItem(fingerprint, nowMs);
    if (!current) return { outcome: 'unknown' };
    const record = fromItem(current);
    if (record.startsAt > starts || record.notifiedAt > refired || (record.refiredAt ?? '') > refired)
      return { outcome: 'newer occurrence', record };
    if (record.acknowledgement) return { outcome: 'already acknowledged', record };
    return { outcome: 'resolved', record };
  }

  async setSilence(
    fingerprint: string,
    startsAt: string,
    silence: { id: string; endsAt: string },
    nowMs: number,
  ): Promise<void> {
    await this.t.update(fingerprint, {
      set: { '#exp': this.t.expiry(nowMs) },
      setExpr: ['#ack.#sid = :id', '#ack.#sue = :ends'],
      condition: '#s = :s AND attribute_exists(#ack)',
      values: { ':id': silence.id, ':ends': silence.endsAt, ':s': startsAt },
    });
  }
}
