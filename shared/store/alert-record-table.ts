/**
 * What the four alert stores share (`alert-record.ts`): the table, its document client and TTL, and the
 * one way they change a record: a conditional `UpdateItem` described as an {@link UpdateSpec}, every
 * attribute name and value through a placeholder. Also the history items every store appends.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { batchGet, type RawItem } from './batch-get.js';
import { ifConditionHolds } from './conditional.js';
import { historyKey, recordKey } from './keys.js';
import {
  isoTime,
  recordItemSchema,
  replacedSchema,
  toJson,
  type RecordItem,
  type Replaced,
} from './alert-record-items.js';
import { parseItem, parseOptional } from './stored-item.js';
import type { HistoryBatch, HistoryInput } from './alert-record.js';

/** Attribute names go through placeholders: `status`, `at` and others are DynamoDB reserved words. */
export const NAMES = {
  '#fp': 'fingerprint',
  '#s': 'startsAt',
  '#st': 'status',
  '#a': 'alertJson',
  '#e': 'enrichmentJson',
  '#gk': 'groupKey',
  '#ext': 'externalURL',
  '#ch': 'channels',
  '#n': 'notifiedAt',
  '#r': 'resolvedAt',
  '#ack': 'ack',
  '#esc': 'escalation',
  '#seq': 'historySeq',
  '#exp': 'expiresAt',
  '#gen': 'generation',
  '#state': 'state',
  '#at': 'at',
  '#reason': 'reason',
  '#sid': 'silenceId',
  '#sue': 'silenceEndsAt',
  '#rf': 'refiredAt',
  '#de': 'deliveredEvent',
  '#rc': 'runCount',
  '#rs': 'runSince',
  '#nej': 'notifiedEventJson',
  '#nes': 'notifiedEventSeq',
} as const;
export type Name = keyof typeof NAMES;

/** One conditional `UpdateItem` of a record, in parts. */
export interface UpdateSpec {
  /** `SET #name = <value>` per entry. */
  set?: Partial<Record<Name, unknown>>;
  /** Other `SET` clauses, written out. */
  setExpr?: string[];
  remove?: Name[];
  removeExpr?: string[];
  /** `ADD #name <value>` per entry. */
  add?: Partial<Record<Name, unknown>>;
  condition: string;
  /** The values the condition and the written-out clauses name. */
  values: Record<string, unknown>;
}

export class RecordTable {
  readonly doc: DynamoDBDocumentClient;
  readonly table: string;
  readonly #ttlSeconds: number;

  /** @param options.ttlSeconds how long records and history are kept after their last write, seconds */
  constructor(client: DynamoDBClient, options: { tableName: string; ttlSeconds: number }) {
    this.doc = DynamoDBDocumentClient.from(client);
    this.table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
  }

  /** The `expiresAt` of an item written at `nowMs`, epoch seconds. */
  expiry(nowMs: number): number {
    return Math.floor(nowMs / 1000) + this.#ttlSeconds;
  }

  /** The live record of `fingerprint`, parsed. @throws StoredItemError, the SDK's error */
  async getItem(fingerprint: string, nowMs: number): Promise<RecordItem | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: { pk: recordKey(fingerprint) }, ConsistentRead: true }),
    );
    return isLiveRecord(out.Item, nowMs) ? parseItem(recordItemSchema, out.Item) : undefined;
  }

  /** The items of `keys` that exist (in no order), unparsed. */
  async getAll(keys: string[]): Promise<RawItem[]> {
    const read = await batchGet(this.doc, this.table, keys);
    return [...read.values()].filter((item) => item !== undefined);
  }

  /** `u` on the record of `fingerprint`: the item as written, or `undefined` when the condition failed. */
  async update(fingerprint: string, u: UpdateSpec): Promise<RecordItem | undefined> {
    const out = await ifConditionHolds(
      this.doc.send(new UpdateCommand({ ...updateInput(this.table, fingerprint, u), ReturnValues: 'ALL_NEW' })),
    );
    return out && parseItem(recordItemSchema, out.Attributes);
  }

  /**
   * A new occurrence's write: `undefined` when its condition failed, else what it replaced (the old values
   * of the attributes it wrote: `old` absent for a new record).
   */
  async replace(fingerprint: string, u: UpdateSpec): Promise<{ old?: Replaced } | undefined> {
    const out = await ifConditionHolds(
      this.doc.send(new UpdateCommand({ ...updateInput(this.table, fingerprint, u), ReturnValues: 'UPDATED_OLD' })),
    );
    return out && { ...(out.Attributes && { old: parseOptional(replacedSchema, out.Attributes) }) };
  }

  /** Puts an item whole (a history item: its key is its own, taken by a record update's counter). */
  async put(item: Record<string, unknown>): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
  }

  /**
   * Writes history item number `seq` (the counter a record update just advanced), or adds it to `batch`.
   * @param seq the record's `historySeq` after the update; nothing is written without one
   */
  async putHistory(
    fingerprint: string,
    seq: number | undefined,
    event: HistoryInput,
    at: { nowMs: number; batch?: HistoryBatch },
  ): Promise<void> {
    if (!seq) return;
    const row = {
      pk: historyKey(fingerprint, seq),
      eventJson: eventJson(event, at.nowMs),
      expiresAt: this.expiry(at.nowMs),
    };
    if (at.batch) at.batch.items.push(row);
    else await this.put(row);
  }
}

/** A history event as stored, at `nowMs`. */
export function eventJson(event: HistoryInput, nowMs: number): string {
  return toJson({ at: isoTime(nowMs), ...event });
}

/** Whether a raw item is a record not yet expired (DynamoDB deletes expired items late, dynalite never). */
export function isLiveRecord(item: RawItem | undefined, nowMs: number): item is RawItem {
  return typeof item?.expiresAt === 'number' && item.expiresAt * 1000 > nowMs && typeof item.startsAt === 'string';
}

/** The `UpdateItem` input of `u` on the record of `fingerprint` (placeholders for every name and value). */
function updateInput(table: string, fingerprint: string, u: UpdateSpec): UpdateCommandInput {
  const sets = [...Object.keys(u.set ?? {}).map((n) => `${n} = :v${n.slice(1)}`), ...(u.setExpr ?? [])];
  const removes = [...(u.remove ?? []), ...(u.removeExpr ?? [])];
  const adds = Object.keys(u.add ?? {}).map((n) => `${n} :v${n.slice(1)}`);
  const expression = [
    sets.length && `SET ${sets.join(', ')}`,
    removes.length && `REMOVE ${removes.join(', ')}`,
    adds.length && `ADD ${adds.join(', ')}`,
  ]
    .filter(Boolean)
    .join(' ');
  const values: Record<string, unknown> = { ...u.values };
  for (const [n, v] of Object.entries({ ...u.set, ...u.add })) values[`:v${n.slice(1)}`] = v;
  // Only the values the expressions name: DynamoDB refuses unused ones.
  const text = `${expression} ${u.condition}`;
  const used = Object.fromEntries(Object.entries(values).filter(([k]) => new RegExp(`${k}\\b`).test(text)));
  return {
    TableName: table,
    Key: { pk: recordKey(fingerprint) },
    UpdateExpression: expression,
    ConditionExpression: u.condition,
    ExpressionAttributeNames: Object.fromEntries(
      Object.entries(NAMES).filter(([k]) => new RegExp(`${k}\\b`).test(text)),
    ),
    ...(Object.keys(used).length && { ExpressionAttributeValues: used }),
  };
}
