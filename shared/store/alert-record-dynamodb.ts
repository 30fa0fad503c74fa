/**
 * DynamoDB adapter of {@link AlertRecordStore}, in the dedupe table (item layout: `alert-record-items.ts`). Built on
 * conditional writes of single items, like the dedupe ledger; on a shared table a group's new records go in
 * TransactWriteItems (`record-transactions.ts`; on dynalite through `dynalite-transactions.ts`), each action
 * the same conditional write. Items whose `expiresAt` has passed are treated as absent.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import pLimit from 'p-limit';
import pRetry from 'p-retry';
import { BatchGetCommand, type BatchGetCommandOutput, BatchWriteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand, UpdateCommand, type UpdateCommandInput, type UpdateCommandOutput } from '@aws-sdk/lib-dynamodb';
import { RECORD_SPACE, recordJsons, eventFromItem, fromItem, historyKey, isoTime, normaliseTime, recordKey, recordText, toJson, type RecordItem } from './alert-record-items.js';
import { withKeys } from './key-locks.js';
import { unchangedSince, watchWrites } from './write-epoch.js';
import { lockKey, MIN_BATCH } from './start-many.js';
import { type TransactSupport, type TransactUpdate, transactUpdates } from './record-transactions.js';
import type { Acknowledgement, AckOutcome, AlertRecordStore, AlertRecord, EscalationCancelReason, HistoryBatch, HistoryEvent, HistoryInput, NotifiedAlert } from './alert-record.js';

/** BatchGetItem's per-call key limit. @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html */
const BATCH_GET_MAX_KEYS = 100;
/** Rounds of `UnprocessedKeys` retried when reading history. */
const BATCH_GET_ROUNDS = 3;
/** BatchWriteItem's per-call item limit. @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html */
const BATCH_WRITE_MAX_ITEMS = 25;
/** Rounds of `UnprocessedItems` retried when writing history. */
const BATCH_WRITE_ROUNDS = 3;
/**
 * Retries of a single record write refused by a transaction in progress on its item, and the first
 * backoff, ms (doubling, randomised): 25 + 50 + 100 + 200 ms outlasts a 100-write transaction.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling
 */
const CONFLICT_RETRIES = 4;
const CONFLICT_BACKOFF_MS = 25;
/** History batches written at once: a storm's 200 batches side by side, not one after the other. */
const BATCH_WRITES_IN_FLIGHT = 8;

/** Attribute names go through placeholders: `status`, `at` and others are DynamoDB reserved words. */
const NAMES = {
  '#fp': 'fingerprint', '#s': 'startsAt', '#st': 'status', '#a': 'alertJson', '#e': 'enrichmentJson', '#gk': 'groupKey',
  '#ext': 'externalURL', '#ch': 'channels', '#n': 'notifiedAt', '#r': 'resolvedAt', '#ack': 'ack', '#esc': 'escalation',
  '#seq': 'historySeq', '#exp': 'expiresAt', '#gen': 'generation', '#state': 'state', '#at': 'at', '#reason': 'reason', '#sid': 'silenceId',
  '#rf': 'refiredAt', '#de': 'deliveredEvent', '#rc': 'runCount', '#rs': 'runSince', '#nej': 'notifiedEventJson', '#nes': 'notifiedEventSeq',
} as const;
type Name = keyof typeof NAMES;

export class DynamoDbAlertRecordStore implements AlertRecordStore {
  readonly #client: DynamoDBClient;
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ttlSeconds: number;
  readonly #exclusive: boolean;
  /** Whether the endpoint has TransactWriteItems (a plain dynalite has not: then single writes only). */
  readonly #transactions: TransactSupport = { supported: true };
  readonly #warn: (message: string, fields: Record<string, unknown>) => void;

  /**
   * @param client a configured DynamoDB client
   * @param options.ttlSeconds how long records and history are kept after their last write, seconds
   * @param options.exclusive this process is the table's only writer (the embedded store): record
   *   writes take in-process key locks, and {@link recordManyNotified} batches new occurrences
   * @param options.warn told of a transaction of new records that failed for another reason than a
   *   condition (throttling after the SDK's retries, the network): its records are then written one by one
   */
  constructor(client: DynamoDBClient, options: { tableName: string; ttlSeconds: number; exclusive?: boolean; warn?: (message: string, fields: Record<string, unknown>) => void }) {
    this.#client = client;
    this.#warn = options.warn ?? (() => {});
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
    this.#exclusive = options.exclusive ?? false;
    if (this.#exclusive) watchWrites(client);
    // Unconditional batched writes are safe only where this process is the table's only writer; elsewhere, transactions.
    if (!this.#exclusive) this.recordManyNotified = (list, nowMs) => this.#recordNew(list, nowMs);
  }

  async get(fingerprint: string, nowMs: number): Promise<AlertRecord | undefined> {
    const item = await this.#getItem(fingerprint, nowMs);
    return item && fromItem(item);
  }

  /**
   * See {@link AlertRecordStore.recordNotified}. A new occurrence's write carries its `notified` event
   * (`notifiedEventJson`, as the batched put does) and returns only what it replaced (`UPDATED_OLD`): the
   * record it leaves is what the write sets, so a new alert costs this one request. The event an older write
   * left in the record moves to its history item (into `batch`, else written at once). Any other write
   * (same occurrence, a re-fire) returns its record and adds a history item, as before.
   */
  async recordNotified(n: NotifiedAlert, nowMs: number, batch?: HistoryBatch): Promise<{ record: AlertRecord; newOccurrence: boolean } | undefined> {
    const { fresh, specs } = this.#notifiedSpecs(n, nowMs);
    for (const spec of specs) {
      if (spec === fresh) {
        const replaced = await this.#updateFresh(n.alert.fingerprint, fresh);
        if (!replaced) continue;
        const moved = movedEvent(n.alert.fingerprint, replaced.old);
        if (moved && batch) batch.items.push(moved);
        else if (moved) await this.#doc.send(new PutCommand({ TableName: this.#table, Item: moved }));
        return { record: fromItem(itemOf(recordKey(n.alert.fingerprint), fresh, (replaced.old?.historySeq ?? 0) + 1)), newOccurrence: true };
      }
      const item = await this.#update(n.alert.fingerprint, spec);
      if (!item) continue;
      await this.#putHistory(n.alert.fingerprint, item, notifiedEvent(n), nowMs, batch);
      return { record: fromItem(item), newOccurrence: false };
    }
    return undefined;
  }

  /**
   * See {@link AlertRecordStore.recordManyNotified}: on an exclusive table, under the in-process locks
   * of the records (which every record write of this store takes), one BatchGetItem per 100 says which
   * records a new occurrence replaces (not read: those the group's read found absent, while no record was
   * written since, `NotifiedAlert.recordAbsentAt`) — absent, expired or of an older `startsAt`, where
   * {@link recordNotified} would make its `fresh` write — and BatchWriteItem puts those whole, their
   * history counter carried on and their `notified` event inside (`notifiedEventJson`, read by
   * {@link history}): no history item of its own, so a storm costs half the item writes after delivery.
   * Any other entry is left to `recordNotified` (`null`).
   */
  recordManyNotified?: AlertRecordStore['recordManyNotified'] = async (list, nowMs, batch) => {
    const results: (RecordWrite | undefined | null)[] = list.map(() => null);
    if (list.length < MIN_BATCH) return results;
    const limit = pLimit(BATCH_WRITES_IN_FLIGHT);
    const starts = Array.from({ length: Math.ceil(list.length / BATCH_GET_MAX_KEYS) }, (_, k) => k * BATCH_GET_MAX_KEYS);
    await Promise.all(starts.map((i) => limit(async () => {
      const slice = list.slice(i, i + BATCH_GET_MAX_KEYS);
      const keys = [...new Set(slice.map((n) => recordKey(n.alert.fingerprint)))];
      // One alert twice in a slice is left to single writes (the second must see the first).
      if (keys.length !== slice.length) return;
      await withKeys(keys.map((k) => lockKey(this.#table, k)), async () => {
        // A record the group's read found absent is absent still while no record was written since (`write-epoch.ts`): not read again.
        const unread = slice.filter((n) => !unchangedSince(this.#client, n.recordAbsentAt, RECORD_SPACE)).map((n) => recordKey(n.alert.fingerprint));
        const read = new Map((unread.length ? await this.#batchGet<RecordItem>(unread) : []).map((item) => [item.pk, item]));
        const puts: { index: number; item: RecordItem; moved?: HistoryRow }[] = [];
        slice.forEach((n, j) => {
          const old = read.get(recordKey(n.alert.fingerprint));
          const startsAt = normaliseTime(n.alert.startsAt);
          if (old && old.startsAt >= startsAt && old.expiresAt * 1000 > nowMs) return;
          const { fresh } = this.#notifiedSpecs(n, nowMs);
          // The notified event rides in the record (no history item, no request of its own); the one an older write left there moves to its history item.
          const item = itemOf(recordKey(n.alert.fingerprint), fresh, (old?.historySeq ?? 0) + 1);
          const moved = movedEvent(n.alert.fingerprint, old);
          puts.push({ index: i + j, item, ...(moved && { moved }) });
        });
        for (const written of await this.#batchPut(puts.map((p) => p.item))) {
          const { index, item, moved } = puts.find((p) => p.item.pk === written)!;
          if (moved) batch.items.push(moved);
          results[index] = { record: fromItem(item), newOccurrence: true };
        }
      });
    })));
    return results;
  };

  /**
   * {@link recordManyNotified} on a shared table: the new occurrences' writes (a firing, generation 0: the
   * `fresh` write {@link recordNotified} tries first) go in TransactWriteItems of up to 100
   * (`record-transactions.ts`), each conditioned on its record being absent or expired — so that nothing it
   * replaces needs moving (an expired record's last event is past its own expiry, read by nobody) and no
   * `UPDATED_OLD` is needed, which transactions cannot return. A write whose record exists (a known
   * alert's new occurrence, an HA peer's or an acknowledged record written since the group's read), any
   * other write, one alert twice, one whose record the group read found (`recordFound`), or a lone new occurrence is left to `recordNotified` (`null`).
   */
  async #recordNew(list: NotifiedAlert[], nowMs: number): Promise<(RecordWrite | null)[]> {
    const results: (RecordWrite | null)[] = list.map(() => null);
    const perKey = new Map<string, number>();
    for (const n of list) perKey.set(recordKey(n.alert.fingerprint), (perKey.get(recordKey(n.alert.fingerprint)) ?? 0) + 1);
    const fresh = list.flatMap((n, i) => (n.alert.status === 'firing' && !n.generation && !n.recordFound && perKey.get(recordKey(n.alert.fingerprint)) === 1 ? [i] : []));
    if (fresh.length < 2 || !this.#transactions.supported) return results;
    const specs = fresh.map((i) => this.#notifiedSpecs(list[i]!, nowMs).fresh);
    const updates = fresh.map((i, j) => this.#updateInput(list[i]!.alert.fingerprint, { ...specs[j]!, condition: NEW_RECORD }));
    const applied = await transactUpdates(this.#doc, updates, this.#transactions, (err, writes) =>
      this.#warn('record transaction failed', { writes, error: err.message, fallback: 'each record written alone' }),
    );
    applied.forEach((ok, j) => {
      if (ok) results[fresh[j]!] = { record: fromItem(itemOf(recordKey(list[fresh[j]!]!.alert.fingerprint), specs[j]!, 1)), newOccurrence: true };
    });
    return results;
  }

  /** The writes {@link recordNotified} tries, in order, and which of them starts a new occurrence. */
  #notifiedSpecs(n: NotifiedAlert, nowMs: number): { fresh: UpdateSpec; specs: UpdateSpec[] } {
    const startsAt = normaliseTime(n.alert.startsAt);
    const resolved = n.alert.status === 'resolved';
    const now = isoTime(nowMs);
    const nowSec = Math.floor(nowMs / 1000);
    // The record must fit DynamoDB's 400 KB item limit whatever the alert carries (`alertJsonForRecord`); queries the
    // alert's labels rebuild are not stored (`recordJsons`, `enrich/stored.ts`).
    const { alertJson, enrichmentJson } = recordJsons(n.alert, n.enrichment);
    // Each write also counts the history event it records (`historySeq`), saving a call per alert in a storm.
    // DynamoDB refuses an empty set: an alert no channel accepted carries no `channels` attribute.
    const channels = n.channels.length ? { '#ch': new Set(n.channels) } : undefined;
    // The delivery mark (`delivery-mark.ts`): this write then also records the delivery.
    const mark = n.deliveredEvent ? { '#de': n.deliveredEvent } : undefined;
    // A new occurrence's flap run (`runFromRecord`); a firing not counted (a storm) starts none.
    const run = n.flapRun && !resolved ? { '#rc': n.flapRun.count, '#rs': n.flapRun.sinceMs } : undefined;
    // The new occurrence's `notified` event rides in the record as event number `historySeq + 1` (both set from the
    // counter as it was: DynamoDB reads every operand before the update); see `recordNotified`.
    const event = this.#eventJson(notifiedEvent(n), nowMs);
    const fresh: UpdateSpec = {
      set: { '#fp': n.alert.fingerprint, '#s': startsAt, '#st': n.alert.status, '#a': alertJson, '#gk': recordText(n.groupKey), '#ext': recordText(n.externalURL), '#n': now, ...channels, '#exp': this.#expiry(nowMs), ...(enrichmentJson && { '#e': enrichmentJson }), ...(resolved && { '#r': now }), ...mark, ...run, '#nej': event },
      setExpr: ['#seq = if_not_exists(#seq, :zero) + :one', '#nes = if_not_exists(#seq, :zero) + :one'],
      // A new occurrence starts at generation 0: an earlier occurrence's generation would make its re-fire's write (`#again`) fail.
      remove: ['#ack', '#esc', '#gen', '#rf', ...(channels ? [] : ['#ch' as const]), ...(n.enrichment ? [] : ['#e' as const]), ...(resolved ? [] : ['#r' as const]), ...(mark ? [] : ['#de' as const]), ...(run ? [] : ['#rc' as const, '#rs' as const])],
      condition: 'attribute_not_exists(pk) OR #s < :s OR #exp <= :nowSec',
      values: { ':s': startsAt, ':nowSec': nowSec, ':zero': 0, ':one': 1 },
    };
    // The same occurrence: a repair, another channel, or its resolution. A late firing never un-resolves it.
    const same: UpdateSpec = {
      set: { '#exp': this.#expiry(nowMs), ...(resolved && { '#st': 'resolved', '#a': alertJson }) },
      setExpr: resolved ? ['#r = if_not_exists(#r, :now)'] : [],
      add: { ...channels, '#seq': 1 },
      condition: '#s = :s AND #exp > :nowSec',
      values: { ':s': startsAt, ':nowSec': nowSec, ...(resolved && { ':now': now }) },
    };
    // A firing's mark only while the record is firing: a late firing must not take a delivered resolve's mark.
    const sameMarked: UpdateSpec | undefined = mark && { ...same, set: { ...same.set, ...mark }, condition: resolved ? same.condition : `${same.condition} AND #st = :firing`, values: { ...same.values, ...(!resolved && { ':firing': 'firing' }) } };
    // A resolve is usually of a known occurrence, a firing usually of a new one: try the likely write first.
    const generation = n.generation ?? 0;
    const sames = sameMarked ? (resolved ? [sameMarked] : [sameMarked, same]) : [same];
    const specs = resolved ? [...sames, fresh] : generation > 0 ? [this.#again(n, startsAt, nowMs, channels), fresh, ...sames] : [fresh, ...sames];
    return { fresh, specs };
  }

  /** Puts whole records, 25 per request; returns the keys written (unprocessed ones are left to single writes). */
  async #batchPut(items: RecordItem[]): Promise<string[]> {
    const written: string[] = [];
    for (let i = 0; i < items.length; i += BATCH_WRITE_MAX_ITEMS) {
      let requests = items.slice(i, i + BATCH_WRITE_MAX_ITEMS).map((Item) => ({ PutRequest: { Item } }));
      const sent = new Set(requests.map((r) => r.PutRequest.Item.pk));
      for (let round = 0; requests.length && round < BATCH_WRITE_ROUNDS; round++) {
        const out = await this.#doc.send(new BatchWriteCommand({ RequestItems: { [this.#table]: requests } }));
        requests = (out.UnprocessedItems?.[this.#table] ?? []) as typeof requests;
      }
      for (const left of requests) sent.delete(left.PutRequest.Item.pk);
      written.push(...sent);
    }
    return written;
  }

  /**
   * The same occurrence firing again after its announced resolve (generation ≥ 1, see
   * `shared/store/occurrence.ts`): firing once more, its resolve time, finished escalation and
   * acknowledgement cleared — the acknowledgement was of the firing that resolved, and a re-fire may
   * be a missed incident — so a critical alert escalates again unless someone acknowledges anew.
   */
  #again(n: NotifiedAlert, startsAt: string, nowMs: number, channels: { '#ch': Set<string> } | undefined): UpdateSpec {
    return {
      // When it fired again (our clock): links issued before it do not acknowledge it (`acknowledge`).
      set: { '#st': 'firing', '#a': toJson(n.alert), '#exp': this.#expiry(nowMs), '#gen': n.generation, '#rf': isoTime(nowMs), ...(n.deliveredEvent && { '#de': n.deliveredEvent }) },
      remove: ['#r', '#esc', '#ack'],
      add: { ...channels, '#seq': 1 },
      condition: '#s = :s AND #exp > :nowSec AND (attribute_not_exists(#gen) OR #gen < :g)',
      values: { ':s': startsAt, ':nowSec': Math.floor(nowMs / 1000), ':g': n.generation },
    };
  }

  async addChannels(fingerprint: string, startsAt: string, channels: string[], nowMs: number): Promise<void> {
    await this.#update(fingerprint, { set: { '#exp': this.#expiry(nowMs) }, add: { '#ch': new Set(channels) }, condition: '#s = :s', values: { ':s': startsAt } });
  }

  async acknowledge(fingerprint: string, ack: Acknowledgement, latestStartMs: number, nowMs: number): Promise<AckOutcome> {
    const stored = { by: ack.by, at: ack.at, channel: ack.channel, ...(ack.silenceId && { silenceId: ack.silenceId }) };
    const item = await this.#update(fingerprint, {
      set: { '#ack': stored, '#exp': this.#expiry(nowMs) },
      // A link covers the occurrence and generation that were firing when it was issued, not a later re-fire.
      condition: 'attribute_exists(pk) AND #st = :firing AND attribute_not_exists(#ack) AND #s <= :issued AND (attribute_not_exists(#rf) OR #rf <= :issued) AND #exp > :nowSec',
      values: { ':firing': 'firing', ':issued': isoTime(latestStartMs), ':nowSec': Math.floor(nowMs / 1000) },
    });
    if (item) return { outcome: 'acknowledged', record: fromItem(item) };
    const record = await this.get(fingerprint, nowMs);
    if (!record) return { outcome: 'unknown' };
    if (record.startsAt > isoTime(latestStartMs) || (record.refiredAt ?? '') > isoTime(latestStartMs)) return { outcome: 'newer occurrence', record };
    if (record.acknowledgement) return { outcome: 'already acknowledged', record };
    return { outcome: 'resolved', record };
  }

  async setSilence(fingerprint: string, startsAt: string, silenceId: string, nowMs: number): Promise<void> {
    await this.#update(fingerprint, { set: { '#exp': this.#expiry(nowMs) }, setExpr: ['#ack.#sid = :id'], condition: '#s = :s AND attribute_exists(#ack)', values: { ':id': silenceId, ':s': startsAt } });
  }

  async scheduleEscalation(fingerprint: string, startsAt: string, dueAtMs: number, nowMs: number): Promise<boolean> {
    const item = await this.#update(fingerprint, {
      set: { '#esc': { state: 'scheduled', dueAt: isoTime(dueAtMs) }, '#exp': this.#expiry(nowMs) },
      condition: '#s = :s AND attribute_not_exists(#esc)',
      values: { ':s': startsAt },
    });
    return item !== undefined;
  }

  async unscheduleEscalation(fingerprint: string, startsAt: string): Promise<void> {
    await this.#update(fingerprint, { removeExpr: ['#esc'], condition: '#s = :s AND #esc.#state = :scheduled', values: { ':s': startsAt, ':scheduled': 'scheduled' } });
  }

  async cancelEscalation(fingerprint: string, startsAt: string, reason: EscalationCancelReason, nowMs: number): Promise<boolean> {
    const item = await this.#update(fingerprint, {
      setExpr: ['#esc.#state = :cancelled', '#esc.#at = :now', '#esc.#reason = :reason'],
      condition: '#s = :s AND #esc.#state = :scheduled',
      values: { ':cancelled': 'cancelled', ':now': isoTime(nowMs), ':reason': reason, ':s': startsAt, ':scheduled': 'scheduled' },
    });
    return item !== undefined;
  }

  async claimEscalation(fingerprint: string, startsAt: string, nowMs: number): Promise<AlertRecord | undefined> {
    const item = await this.#update(fingerprint, {
      setExpr: ['#esc.#state = :sent', '#esc.#at = :now'],
      condition: '#s = :s AND #st = :firing AND attribute_not_exists(#ack) AND #esc.#state = :scheduled AND #exp > :nowSec',
      values: { ':sent': 'sent', ':now': isoTime(nowMs), ':s': startsAt, ':firing': 'firing', ':scheduled': 'scheduled', ':nowSec': Math.floor(nowMs / 1000) },
    });
    return item && fromItem(item);
  }

  async releaseEscalation(fingerprint: string, startsAt: string): Promise<void> {
    await this.#update(fingerprint, {
      setExpr: ['#esc.#state = :scheduled'],
      removeExpr: ['#esc.#at'],
      condition: '#s = :s AND #esc.#state = :sent',
      values: { ':scheduled': 'scheduled', ':sent': 'sent', ':s': startsAt },
    });
  }

  async addHistory(fingerprint: string, event: HistoryInput, nowMs: number): Promise<void> {
    const item = await this.#update(fingerprint, { add: { '#seq': 1 }, condition: 'attribute_exists(pk)', values: {} });
    if (item) await this.#putHistory(fingerprint, item, event, nowMs);
  }

  async getMany(fingerprints: string[], nowMs: number): Promise<Map<string, AlertRecord>> {
    const found = new Map<string, AlertRecord>();
    // By key: a fingerprint and its digest name one item, and BatchGetItem refuses duplicate keys.
    const unique = [...new Set(fingerprints.map(recordKey))];
    for (let i = 0; i < unique.length; i += BATCH_GET_MAX_KEYS) {
      for (const item of await this.#batchGet<RecordItem>(unique.slice(i, i + BATCH_GET_MAX_KEYS))) {
        if (item.expiresAt * 1000 > nowMs && item.startsAt) found.set(item.fingerprint, fromItem(item));
      }
    }
    return found;
  }

  /** Writes history item number `item.historySeq` (the counter the caller's update just advanced), or adds it to `batch`. */
  async #putHistory(fingerprint: string, item: RecordItem, event: HistoryInput, nowMs: number, batch?: HistoryBatch): Promise<void> {
    if (!item.historySeq) return;
    const row = { pk: historyKey(fingerprint, item.historySeq), eventJson: this.#eventJson(event, nowMs), expiresAt: this.#expiry(nowMs) };
    if (batch) batch.items.push(row);
    else await this.#doc.send(new PutCommand({ TableName: this.#table, Item: row }));
  }

  /** A history event as stored, at `nowMs`. */
  #eventJson(event: HistoryInput, nowMs: number): string {
    return toJson({ at: isoTime(nowMs), ...event });
  }

  async flushHistory(batch: HistoryBatch): Promise<void> {
    const items = batch.items.splice(0);
    const limit = pLimit(BATCH_WRITES_IN_FLIGHT);
    const chunks = Array.from({ length: Math.ceil(items.length / BATCH_WRITE_MAX_ITEMS) }, (_, i) => items.slice(i * BATCH_WRITE_MAX_ITEMS, (i + 1) * BATCH_WRITE_MAX_ITEMS));
    const left = await Promise.all(chunks.map((chunk) => limit(async () => {
      let requests = chunk.map((Item) => ({ PutRequest: { Item } }));
      for (let round = 0; requests.length && round < BATCH_WRITE_ROUNDS; round++) {
        const out = await this.#doc.send(new BatchWriteCommand({ RequestItems: { [this.#table]: requests } }));
        requests = (out.UnprocessedItems?.[this.#table] ?? []) as typeof requests;
      }
      return requests.length;
    })));
    const unwritten = left.reduce((a, b) => a + b, 0);
    if (unwritten) throw new Error(`${unwritten} history events not written (DynamoDB left them unprocessed ${BATCH_WRITE_ROUNDS} times)`);
  }

  async history(fingerprint: string, limit: number, nowMs: number): Promise<HistoryEvent[]> {
    const item = await this.#getItem(fingerprint, nowMs);
    const last = item?.historySeq ?? 0;
    const seqs = Array.from({ length: Math.min(limit, last) }, (_, i) => last - i).reverse();
    const found = new Map<number, HistoryEvent>();
    for (let i = 0; i < seqs.length; i += BATCH_GET_MAX_KEYS) {
      for (const row of await this.#batchGet<HistoryRow>(seqs.slice(i, i + BATCH_GET_MAX_KEYS).map((s) => historyKey(fingerprint, s)))) {
        if (row.expiresAt * 1000 > nowMs) found.set(Number(row.pk.split('#').pop()), eventFromItem(row));
      }
    }
    // The event a batched put kept in the record (`notifiedEventJson`) has no history item of its own.
    const inline = item?.notifiedEventSeq;
    if (inline && item.notifiedEventJson && seqs.includes(inline) && !found.has(inline)) found.set(inline, eventFromItem({ eventJson: item.notifiedEventJson }));
    return seqs.filter((s) => found.has(s)).map((s) => found.get(s)!);
  }

  async scheduledEscalations(nowMs: number): Promise<{ fingerprint: string; startsAt: string; dueAtMs: number }[]> {
    const found: { fingerprint: string; startsAt: string; dueAtMs: number }[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const out = await this.#doc.send(new ScanCommand({
        TableName: this.#table,
        ConsistentRead: true,
        FilterExpression: 'begins_with(#pk, :alert) AND #esc.#state = :scheduled AND #exp > :nowSec',
        ProjectionExpression: '#fp, #s, #esc',
        ExpressionAttributeNames: { '#pk': 'pk', '#fp': NAMES['#fp'], '#s': NAMES['#s'], '#esc': NAMES['#esc'], '#state': NAMES['#state'], '#exp': NAMES['#exp'] },
        ExpressionAttributeValues: { ':alert': recordKey(''), ':scheduled': 'scheduled', ':nowSec': Math.floor(nowMs / 1000) },
        ExclusiveStartKey: start,
      }));
      for (const item of (out.Items ?? []) as Pick<RecordItem, 'fingerprint' | 'startsAt' | 'escalation'>[]) {
        found.push({ fingerprint: item.fingerprint, startsAt: item.startsAt, dueAtMs: Date.parse(item.escalation!.dueAt) });
      }
      start = out.LastEvaluatedKey;
    } while (start);
    return found;
  }

  #expiry(nowMs: number): number {
    return Math.floor(nowMs / 1000) + this.#ttlSeconds;
  }

  async #getItem(fingerprint: string, nowMs: number): Promise<RecordItem | undefined> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk: recordKey(fingerprint) }, ConsistentRead: true }));
    const item = out.Item as RecordItem | undefined;
    return item && item.expiresAt * 1000 > nowMs && item.startsAt ? item : undefined;
  }

  async #batchGet<T>(keys: string[]): Promise<T[]> {
    const rows: T[] = [];
    let request: Record<string, { Keys: Record<string, unknown>[]; ConsistentRead: boolean }> | undefined = {
      [this.#table]: { Keys: keys.map((pk) => ({ pk })), ConsistentRead: true },
    };
    for (let round = 0; request && round < BATCH_GET_ROUNDS; round++) {
      const out: BatchGetCommandOutput = await this.#doc.send(new BatchGetCommand({ RequestItems: request }));
      rows.push(...((out.Responses?.[this.#table] ?? []) as T[]));
      const left: Record<string, unknown>[] | undefined = out.UnprocessedKeys?.[this.#table]?.Keys;
      request = left?.length ? { [this.#table]: { Keys: left, ConsistentRead: true } } : undefined;
    }
    return rows;
  }

  /** One conditional `UpdateItem` returning the new item, or `undefined` when the condition failed. */
  async #update(fingerprint: string, u: UpdateSpec): Promise<RecordItem | undefined> {
    return (await this.#send(fingerprint, u, 'ALL_NEW'))?.Attributes as RecordItem | undefined;
  }

  /**
   * A new occurrence's write (the `fresh` spec): `undefined` when its condition failed, else what it replaced
   * (the attributes it wrote, as they were: `old` is absent for a new record).
   */
  async #updateFresh(fingerprint: string, fresh: UpdateSpec): Promise<{ old?: Pick<RecordItem, 'historySeq' | 'notifiedEventJson' | 'notifiedEventSeq' | 'expiresAt'> } | undefined> {
    const out = await this.#send(fingerprint, fresh, 'UPDATED_OLD');
    return out && { ...(out.Attributes && { old: out.Attributes as RecordItem }) };
  }

  /** One conditional `UpdateItem`, or `undefined` when the condition failed. */
  async #send(fingerprint: string, u: UpdateSpec, returnValues: 'ALL_NEW' | 'UPDATED_OLD'): Promise<UpdateCommandOutput | undefined> {
    const input = { ...this.#updateInput(fingerprint, u), ReturnValues: returnValues };
    // A record a group's TransactWriteItems is creating refuses other writes until it commits
    // (`TransactionConflictException`, which the SDK does not retry): an acknowledgement clicked
    // meanwhile waits for the commit (milliseconds) instead of failing.
    const send = () =>
      pRetry(() => this.#doc.send(new UpdateCommand(input)), {
        retries: CONFLICT_RETRIES,
        minTimeout: CONFLICT_BACKOFF_MS,
        randomize: true,
        shouldRetry: ({ error }) => error.name === 'TransactionConflictException',
      });
    try {
      return this.#exclusive ? await withKeys([lockKey(this.#table, recordKey(fingerprint))], send) : await send();
    } catch (err) {
      if ((err as Error).name === 'ConditionalCheckFailedException') return undefined;
      throw err;
    }
  }

  /** The `UpdateItem` input of `u` on the record of `fingerprint` (placeholders for every name and value). */
  #updateInput(fingerprint: string, u: UpdateSpec): UpdateCommandInput & TransactUpdate {
    const sets = [...Object.keys(u.set ?? {}).map((n) => `${n} = :v${n.slice(1)}`), ...(u.setExpr ?? [])];
    const removes = [...(u.remove ?? []), ...(u.removeExpr ?? [])];
    const adds = Object.keys(u.add ?? {}).map((n) => `${n} :v${n.slice(1)}`);
    const expression = [sets.length && `SET ${sets.join(', ')}`, removes.length && `REMOVE ${removes.join(', ')}`, adds.length && `ADD ${adds.join(', ')}`].filter(Boolean).join(' ');
    const values: Record<string, unknown> = { ...u.values };
    for (const [n, v] of Object.entries({ ...u.set, ...u.add })) values[`:v${n.slice(1)}`] = v;
    // Only the values the expressions name: DynamoDB refuses unused ones.
    const text = `${expression} ${u.condition}`;
    const used = Object.fromEntries(Object.entries(values).filter(([k]) => new RegExp(`${k}\\b`).test(text)));
    return {
      TableName: this.#table,
      Key: { pk: recordKey(fingerprint) },
      UpdateExpression: expression,
      ConditionExpression: u.condition,
      ExpressionAttributeNames: Object.fromEntries(Object.entries(NAMES).filter(([k]) => new RegExp(`${k}\\b`).test(text))),
      ...(Object.keys(used).length && { ExpressionAttributeValues: used }),
    };
  }
}

type HistoryRow = { pk: string; eventJson: string; expiresAt: number };

/**
 * A new occurrence's write in a transaction: its record absent, or expired (DynamoDB deletes expired items
 * late). Not a live record of an earlier occurrence, whose `notified` event would have to move to history.
 */
const NEW_RECORD = 'attribute_not_exists(pk) OR #exp <= :nowSec';
type RecordWrite = { record: AlertRecord; newOccurrence: boolean };

/** The `notified` (or `not delivered`) history event of a record write. */
function notifiedEvent(n: NotifiedAlert): HistoryInput {
  const startsAt = normaliseTime(n.alert.startsAt);
  const generation = n.generation ?? 0;
  return n.channels.length
    ? { type: 'notified', status: n.alert.status, channels: [...n.channels].sort(), startsAt, ...(generation > 0 && { generation }) }
    : { type: 'not delivered', status: n.alert.status, startsAt, ...(generation > 0 && { generation }) };
}

/**
 * The whole item a `fresh` write leaves (every attribute it does not set is removed), its history counter at
 * `historySeq`, which is also the number of the `notified` event it carries.
 */
function itemOf(pk: string, fresh: UpdateSpec, historySeq: number): RecordItem {
  const attributes = Object.entries(fresh.set ?? {}).map(([name, value]) => [NAMES[name as Name], value]);
  return { pk, ...Object.fromEntries(attributes), historySeq, notifiedEventSeq: historySeq } as RecordItem;
}

/** The history item of the `notified` event a replaced record held (`notifiedEventJson`), if it held one; it keeps that record's expiry. */
function movedEvent(fingerprint: string, old: Pick<RecordItem, 'notifiedEventJson' | 'notifiedEventSeq' | 'expiresAt'> | undefined): HistoryRow | undefined {
  return old?.notifiedEventJson && old.notifiedEventSeq ? { pk: historyKey(fingerprint, old.notifiedEventSeq), eventJson: old.notifiedEventJson, expiresAt: old.expiresAt } : undefined;
}

interface UpdateSpec {
  set?: Partial<Record<Name, unknown>>;
  setExpr?: string[];
  remove?: Name[];
  removeExpr?: string[];
  add?: Partial<Record<Name, unknown>>;
  condition: string;
  values: Record<string, unknown>;
}
