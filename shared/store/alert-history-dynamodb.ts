/**
 * DynamoDB adapter of {@link HistoryStore}: each event is its own item, `history#<fingerprint>#<seq>`,
 * numbered by the record's `historySeq` (one conditional `ADD` on the record takes the number), so
 * events of concurrent writers never overwrite each other and read back in order. The `notified` event
 * of a new occurrence rides in the record itself (`notifiedEventJson`, `alert-record-dynamodb.ts`).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchWriteItem.html
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import pLimit from 'p-limit';
import { BATCH_GET_MAX_KEYS } from './batch-get.js';
import { eventFromJson, historyRowSchema } from './alert-record-items.js';
import type { RecordTable } from './alert-record-table.js';
import { historyKey } from './keys.js';
import { parseItem } from './stored-item.js';
import type { HistoryBatch, HistoryEvent, HistoryInput, HistoryStore } from './alert-record.js';

/** BatchWriteItem's per-call item limit. */
const BATCH_WRITE_MAX_ITEMS = 25;
/** Rounds of `UnprocessedItems` retried when writing history. */
const BATCH_WRITE_ROUNDS = 3;
/** History batches written at once: a storm's 200 batches side by side, not one after the other. */
const BATCH_WRITES_IN_FLIGHT = 8;

export class DynamoDbHistoryStore implements HistoryStore {
  constructor(private readonly t: RecordTable) {}

  async add(fingerprint: string, event: HistoryInput, nowMs: number): Promise<void> {
    const item = await this.t.update(fingerprint, {
      add: { '#seq': 1 },
      condition: 'attribute_exists(pk)',
      values: {},
    });
    if (item) await this.t.putHistory(fingerprint, item.historySeq, event, { nowMs });
  }

  async flush(batch: HistoryBatch): Promise<void> {
    const items = batch.items.splice(0);
    const limit = pLimit(BATCH_WRITES_IN_FLIGHT);
    const chunks = Array.from({ length: Math.ceil(items.length / BATCH_WRITE_MAX_ITEMS) }, (_, i) =>
      items.slice(i * BATCH_WRITE_MAX_ITEMS, (i + 1) * BATCH_WRITE_MAX_ITEMS),
    );
    const left = await Promise.all(chunks.map((chunk) => limit(() => this.#write(chunk))));
    const unwritten = left.reduce((a, b) => a + b, 0);
    if (unwritten)
      throw new Error(
        `${unwritten} history events not written (DynamoDB left them unprocessed ${BATCH_WRITE_ROUNDS} times)`,
      );
  }

  /** Puts up to 25 history items; returns how many stayed unprocessed. */
  async #write(chunk: HistoryBatch['items']): Promise<number> {
    let requests = chunk.map((Item) => ({ PutRequest: { Item } }));
    for (let round = 0; requests.length && round < BATCH_WRITE_ROUNDS; round++) {
      const out = await this.t.doc.send(new BatchWriteCommand({ RequestItems: { [this.t.table]: requests } }));
      const unprocessed = new Set((out.UnprocessedItems?.[this.t.table] ?? []).map((r) => r.PutRequest?.Item?.pk));
      requests = requests.filter((r) => unprocessed.has(r.PutRequest.Item.pk));
    }
    return requests.length;
  }

  async last(fingerprint: string, limit: number, nowMs: number): Promise<HistoryEvent[]> {
    const item = await this.t.getItem(fingerprint, nowMs);
    const latest = item?.historySeq ?? 0;
    const seqs = Array.from({ length: Math.min(limit, latest) }, (_, i) => latest - i).reverse();
    const found = new Map<number, HistoryEvent>();
    for (let i = 0; i < seqs.length; i += BATCH_GET_MAX_KEYS) {
      const keys = seqs.slice(i, i + BATCH_GET_MAX_KEYS).map((s) => historyKey(fingerprint, s));
      for (const raw of await this.t.getAll(keys)) {
        const row = parseItem(historyRowSchema, raw);
        if (row.expiresAt * 1000 > nowMs)
          found.set(Number(row.pk.split('#').pop()), eventFromJson(row.pk, row.eventJson));
      }
    }
    // The event a new occurrence's write kept in the record (`notifiedEventJson`) has no history item of its own.
    const inline = item?.notifiedEventSeq;
    if (inline && item.notifiedEventJson && seqs.includes(inline) && !found.has(inline))
      found.set(inline, eventFromJson(item.pk, item.notifiedEventJson));
    return seqs.filter((s) => found.has(s)).map((s) => found.get(s)!);
  }
}
