/**
 * DynamoDB adapter of {@link AlertRecordStore} (item layout: `alert-record-items.ts`): single-item
 * conditional writes of the record `alert#<fingerprint>`. Items whose `expiresAt` has passed are treated
 * as absent.
 *
 * A new occurrence's write carries its `notified` event (`notifiedEventJson`) and returns only what it
 * replaced (`UPDATED_OLD`): the record it leaves is what the write sets, so a new alert costs this one
 * request. The event an older write left in the record moves to its history item. Any other write (the
 * same occurrence, a re-fire) returns its record and adds a history item.
 */
import { BATCH_GET_MAX_KEYS } from './batch-get.js';
import { fromItem, isoTime, recordJsons, recordText, toJson } from './alert-record-items.js';
import { eventJson, isLiveRecord, NAMES, type RecordTable, type UpdateSpec } from './alert-record-table.js';
import { historyKey, normaliseTime, recordKey } from './keys.js';
import type {
  AlertRecord,
  AlertRecordStore,
  HistoryBatch,
  HistoryInput,
  NotifiedAlert,
  RecordWrite,
} from './alert-record.js';
import type { Replaced } from './alert-record-items.js';

export class DynamoDbAlertRecordStore implements AlertRecordStore {
  constructor(private readonly t: RecordTable) {}

  async get(fingerprint: string, nowMs: number): Promise<AlertRecord | undefined> {
    const item = await this.t.getItem(fingerprint, nowMs);
    return item && fromItem(item);
  }

  async getMany(fingerprints: string[], nowMs: number): Promise<Map<string, AlertRecord>> {
    const found = new Map<string, AlertRecord>();
    // By key: a fingerprint and its digest name one item, and BatchGetItem refuses duplicate keys.
    const unique = [...new Set(fingerprints.map(recordKey))];
    for (let i = 0; i < unique.length; i += BATCH_GET_MAX_KEYS) {
      for (const item of await this.t.getAll(unique.slice(i, i + BATCH_GET_MAX_KEYS))) {
        if (!isLiveRecord(item, nowMs)) continue;
        const record = fromItem(item);
        found.set(record.fingerprint, record);
      }
    }
    return found;
  }

  /** See {@link AlertRecordStore.recordNotified}: the likely write first, then the others in turn. */
  async recordNotified(n: NotifiedAlert, nowMs: number, batch?: HistoryBatch): Promise<RecordWrite | undefined> {
    const fingerprint = n.alert.fingerprint;
    for (const write of this.#writes(n, nowMs)) {
      if (write.kind === 'new occurrence') {
        const replaced = await this.t.replace(fingerprint, write.spec);
        if (!replaced) continue;
        await this.#moveEvent(fingerprint, replaced.old, batch);
        const seq = (replaced.old?.historySeq ?? 0) + 1;
        return { record: fromItem(itemOf(recordKey(fingerprint), write.spec, seq)), newOccurrence: true };
      }
      const item = await this.t.update(fingerprint, write.spec);
      if (!item) continue;
      await this.t.putHistory(fingerprint, item.historySeq, notifiedEvent(n), { nowMs, batch });
      return { record: fromItem(item), newOccurrence: false };
    }
    return undefined;
  }

  async addChannels(fingerprint: string, startsAt: string, channels: string[], nowMs: number): Promise<void> {
    await this.t.update(fingerprint, {
      set: { '#exp': this.t.expiry(nowMs) },
      add: { '#ch': new Set(channels) },
      condition: '#s = :s',
      values: { ':s': startsAt },
    });
  }

  /** The event a replaced record kept inline, moved to its own history item (into `batch`, else at once). */
  async #moveEvent(fingerprint: string, old: Replaced | undefined, batch?: HistoryBatch): Promise<void> {
    if (!old?.notifiedEventJson || !old.notifiedEventSeq) return;
    const row = {
      pk: historyKey(fingerprint, old.notifiedEventSeq),
      eventJson: old.notifiedEventJson,
      expiresAt: old.expiresAt ?? 0,
    };
    if (batch) batch.items.push(row);
    else await this.t.put(row);
  }

  /**
   * The writes {@link recordNotified} tries, in order: a resolve is usually of a known occurrence, a
   * firing usually of a new one, a re-fire (generation ≥ 1) of its own occurrence.
   */
  #writes(n: NotifiedAlert, nowMs: number): { kind: 'new occurrence' | 'same'; spec: UpdateSpec }[] {
    // The record must fit DynamoDB's 400 KB item limit whatever the alert carries; queries the alert's
    // labels rebuild are not stored (`recordJsons`, `enrich/stored.ts`).
    const jsons = recordJsons(n.alert, n.enrichment);
    const fresh = { kind: 'new occurrence' as const, spec: this.#freshSpec(n, jsons, nowMs) };
    const same = this.#sameSpecs(n, jsons.alertJson, nowMs).map((spec) => ({ kind: 'same' as const, spec }));
    if (n.alert.status === 'resolved') return [...same, fresh];
    if ((n.generation ?? 0) > 0) return [{ kind: 'same', spec: this.#againSpec(n, nowMs) }, fresh, ...same];
    return [fresh, ...same];
  }

  /**
   * A new occurrence: the whole record written, acknowledgement and escalation cleared, its `notified`
   * event inside as event number `historySeq + 1` (both set from the counter as it was: DynamoDB reads
   * every operand before the update). Only over an absent, expired or older occurrence.
   */
  #freshSpec(n: NotifiedAlert, jsons: { alertJson: string; enrichmentJson?: string }, nowMs: number): UpdateSpec {
    const resolved = n.alert.status === 'resolved';
    const now = isoTime(nowMs);
    const { alertJson, enrichmentJson } = jsons;
    const channels = channelSet(n);
    const mark = n.deliveredEvent ? { '#de': n.deliveredEvent } : undefined;
    // A new occurrence's flap run (`runOf`); a firing not counted (a storm) starts none.
    const run = n.flapRun && !resolved ? { '#rc': n.flapRun.count, '#rs': n.flapRun.sinceMs } : undefined;
    return {
      set: {
        '#fp': n.alert.fingerprint,
        '#s': normaliseTime(n.alert.startsAt),
        '#st': n.alert.status,
        '#a': alertJson,
        '#gk': recordText(n.groupKey),
        '#ext': recordText(n.externalURL),
        '#n': now,
        ...channels,
        '#exp': this.t.expiry(nowMs),
        ...(enrichmentJson && { '#e': enrichmentJson }),
        ...(resolved && { '#r': now }),
        ...mark,
        ...run,
        '#nej': eventJson(notifiedEvent(n), nowMs),
      },
      setExpr: ['#seq = if_not_exists(#seq, :zero) + :one', '#nes = if_not_exists(#seq, :zero) + :one'],
      // A new occurrence starts at generation 0: an earlier occurrence's generation would make its re-fire's write fail.
      remove: [
        ...(['#ack', '#esc', '#gen', '#rf'] as const),
        ...(channels ? [] : ['#ch' as const]),
        ...(n.enrichment ? [] : ['#e' as const]),
        ...(resolved ? [] : ['#r' as const]),
        ...(mark ? [] : ['#de' as const]),
        ...(run ? [] : ['#rc' as const, '#rs' as const]),
      ],
      condition: 'attribute_not_exists(pk) OR #s < :s OR #exp <= :nowSec',
      values: { ':s': normaliseTime(n.alert.startsAt), ':nowSec': sec(nowMs), ':zero': 0, ':one': 1 },
    };
  }

  /**
   * The same occurrence: a repair, another channel, or its resolution; a late firing never un-resolves
   * it. With the delivery mark first (a firing's mark only while the record is firing: a late firing must
   * not take a delivered resolve's mark), then, for a firing, without it.
   */
  #sameSpecs(n: NotifiedAlert, alertJson: string, nowMs: number): UpdateSpec[] {
    const resolved = n.alert.status === 'resolved';
    const values = { ':s': normaliseTime(n.alert.startsAt), ':nowSec': sec(nowMs) };
    const same: UpdateSpec = {
      set: {
        '#exp': this.t.expiry(nowMs),
        ...(resolved && { '#st': 'resolved', '#a': alertJson }),
      },
      setExpr: resolved ? ['#r = if_not_exists(#r, :now)'] : [],
      add: { ...channelSet(n), '#seq': 1 },
      condition: '#s = :s AND #exp > :nowSec',
      values: { ...values, ...(resolved && { ':now': isoTime(nowMs) }) },
    };
    if (!n.deliveredEvent) return [same];
    const marked: UpdateSpec = {
      ...same,
      set: { ...same.set, '#de': n.deliveredEvent },
      condition: resolved ? same.condition : `${same.condition} AND #st = :firing`,
      values: { ...same.values, ...(!resolved && { ':firing': 'firing' }) },
    };
    return resolved ? [marked] : [marked, same];
  }

  /**
   * The same occurrence firing again after its announced resolve (generation ≥ 1, see
   * `occurrence.ts`): firing once more, its resolve time, finished escalation and acknowledgement
   * cleared — the acknowledgement was of the firing that resolved, and a re-fire may be a missed
   * incident — so a critical alert escalates again unless someone acknowledges anew. `refiredAt` (our
   * clock): links issued before it do not acknowledge it.
   */
  #againSpec(n: NotifiedAlert, nowMs: number): UpdateSpec {
    return {
      set: {
        '#st': 'firing',
        '#a': toJson(n.alert),
        '#exp': this.t.expiry(nowMs),
        '#gen': n.generation,
        '#rf': isoTime(nowMs),
        ...(n.deliveredEvent && { '#de': n.deliveredEvent }),
      },
      remove: ['#r', '#esc', '#ack'],
      add: { ...channelSet(n), '#seq': 1 },
      condition: '#s = :s AND #exp > :nowSec AND (attribute_not_exists(#gen) OR #gen < :g)',
      values: { ':s': normaliseTime(n.alert.startsAt), ':nowSec': sec(nowMs), ':g': n.generation },
    };
  }
}

const sec = (ms: number) => Math.floor(ms / 1000);

/** The record's `channels`; DynamoDB refuses an empty set: an alert no channel accepted carries none. */
function channelSet(n: NotifiedAlert): { '#ch': Set<string> } | undefined {
  return n.channels.length ? { '#ch': new Set(n.channels) } : undefined;
}

/** The `notified` (or `not delivered`) history event of a record write. */
function notifiedEvent(n: NotifiedAlert): HistoryInput {
  const startsAt = normaliseTime(n.alert.startsAt);
  const generation = n.generation ?? 0;
  const g = {
    ...(generation > 0 && { generation }),
    ...(n.mayHaveBeenDelivered?.length && { mayHaveBeenDelivered: [...n.mayHaveBeenDelivered].sort() }),
  };
  return n.channels.length
    ? { type: 'notified', status: n.alert.status, channels: [...n.channels].sort(), startsAt, ...g }
    : { type: 'not delivered', status: n.alert.status, startsAt, ...g };
}

/**
 * The whole item a new occurrence's write leaves (every attribute it does not set is removed), its
 * history counter at `historySeq`, which is also the number of the `notified` event it carries.
 */
function itemOf(pk: string, fresh: UpdateSpec, historySeq: number): Record<string, unknown> {
  const set: Record<string, unknown> = fresh.set ?? {};
  const attributes = Object.entries(NAMES).flatMap(([name, attribute]) =>
    name in set ? [[attribute, set[name]]] : [],
  );
  return { pk, ...Object.fromEntries(attributes), historySeq, notifiedEventSeq: historySeq };
}
