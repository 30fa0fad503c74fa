/**
 * DynamoDB adapter of {@link EscalationStore}: the record's `escalation` map, moved `scheduled` → `sent`
 * or `cancelled` by conditional writes on the occurrence (`startsAt`), so that of concurrent checks one
 * escalates and a later occurrence is never touched by an earlier one's schedule.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { fromItem, isoTime, scheduledSchema } from './alert-record-items.js';
import { NAMES, type RecordTable } from './alert-record-table.js';
import { RECORD_SPACE } from './keys.js';
import { parseItem } from './stored-item.js';
import type { AlertRecord, EscalationCancelReason, EscalationStore } from './alert-record.js';

export class DynamoDbEscalationStore implements EscalationStore {
  constructor(private readonly t: RecordTable) {}

  async schedule(fingerprint: string, startsAt: string, dueAtMs: number, nowMs: number): Promise<boolean> {
    const item = await this.t.update(fingerprint, {
      set: { '#esc': { state: 'scheduled', dueAt: isoTime(dueAtMs) }, '#exp': this.t.expiry(nowMs) },
      condition: '#s = :s AND attribute_not_exists(#esc)',
      values: { ':s': startsAt },
    });
    return item !== undefined;
  }

  async unschedule(fingerprint: string, startsAt: string): Promise<void> {
    await this.t.update(fingerprint, {
      removeExpr: ['#esc'],
      condition: '#s = :s AND #esc.#state = :scheduled',
      values: { ':s': startsAt, ':scheduled': 'scheduled' },
    });
  }

  async cancel(fingerprint: string, startsAt: string, reason: EscalationCancelReason, nowMs: number): Promise<boolean> {
    const item = await this.t.update(fingerprint, {
      setExpr: ['#esc.#state = :cancelled', '#esc.#at = :now', '#esc.#reason = :reason'],
      condition: '#s = :s AND #esc.#state = :scheduled',
      values: {
        ':cancelled': 'cancelled',
        ':now': isoTime(nowMs),
        ':reason': reason,
        ':s': startsAt,
        ':scheduled': 'scheduled',
      },
    });
    return item !== undefined;
  }

  async claim(fingerprint: string, startsAt: string, nowMs: number): Promise<AlertRecord | undefined> {
    const item = await this.t.update(fingerprint, {
      setExpr: ['#esc.#state = :sent', '#esc.#at = :now'],
      condition:
        '#s = :s AND #st = :firing AND attribute_not_exists(#ack) AND #esc.#state = :scheduled AND #exp > :nowSec',
      values: {
        ':sent': 'sent',
        ':now': isoTime(nowMs),
        ':s': startsAt,
        ':firing': 'firing',
        ':scheduled': 'scheduled',
        ':nowSec': Math.floor(nowMs / 1000),
      },
    });
    return item && fromItem(item);
  }

  async release(fingerprint: string, startsAt: string): Promise<void> {
    await this.t.update(fingerprint, {
      setExpr: ['#esc.#state = :scheduled'],
      removeExpr: ['#esc.#at'],
      condition: '#s = :s AND #esc.#state = :sent',
      values: { ':scheduled': 'scheduled', ':sent': 'sent', ':s': startsAt },
    });
  }

  async scheduled(nowMs: number): Promise<{ fingerprint: string; startsAt: string; dueAtMs: number }[]> {
    const found: { fingerprint: string; startsAt: string; dueAtMs: number }[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.t.doc.send(
        new ScanCommand({
          TableName: this.t.table,
          ConsistentRead: true,
          FilterExpression: 'begins_with(#pk, :alert) AND #esc.#state = :scheduled AND #exp > :nowSec',
          ProjectionExpression: '#fp, #s, #esc',
          ExpressionAttributeNames: {
            '#pk': 'pk',
            ...pick('#fp', '#s', '#esc', '#state', '#exp'),
          },
          ExpressionAttributeValues: {
            ':alert': RECORD_SPACE,
            ':scheduled': 'scheduled',
            ':nowSec': Math.floor(nowMs / 1000),
          },
          ExclusiveStartKey: start,
        }),
      );
      for (const raw of out.Items ?? []) {
        const item = parseItem(scheduledSchema, raw);
        found.push({
          fingerprint: item.fingerprint,
          startsAt: item.startsAt,
          dueAtMs: Date.parse(item.escalation.dueAt),
        });
      }
      start = out.LastEvaluatedKey;
    } while (start);
    return found;
  }
}

/** The placeholders `names` with their attribute names. */
function pick(...names: (keyof typeof NAMES)[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, NAMES[n]]));
}
