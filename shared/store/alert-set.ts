/**
 * Alert sets: the firing alerts one storm digest carried, stored once per digest message so that its
 * single Acknowledge link can name them all. A signed link carries at most 50 fingerprints
 * (`MAX_TOKEN_ALERTS`) and a storm brings thousands; the link names the set's id instead, and the page
 * reads the set from here.
 *
 * Item: `set#<id>` in the dedupe table, `fingerprints` a JSON array of key parts (`keys.ts`), `groupKey`
 * (capped), `expiresAt` (TTL, epoch seconds). One `PutItem` per digest message and channel — not per
 * alert — so a storm of 1,000 alerts costs one request more, not a thousand.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../core/zod.js';
import { keyPart } from './keys.js';
import { recordText } from './alert-record-items.js';
import { parseItem, parseOptional } from './stored-item.js';

/**
 * Most alerts one set holds: 16-hex fingerprints take ~19 bytes each in the JSON, so 10,000 are
 * ~190 KB, under DynamoDB's 400 KB item limit with room for digests of longer ones (`sha256:` + 64 hex:
 * then fewer fit and the write fails, and the link falls back to the first 50).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items
 */
export const MAX_SET_ALERTS = 10_000;

/** A stored set. */
export interface AlertSet {
  /** Fingerprints as key parts, in the digest's order. */
  fingerprints: string[];
  groupKey: string;
}

/** Port for alert sets; one adapter: {@link DynamoDbAlertSetStore}. Times are epoch milliseconds. */
export interface AlertSetStore {
  /**
   * Stores a set under `id` (at most {@link MAX_SET_ALERTS} fingerprints; more are dropped), kept until `expiresAtMs`.
   * @throws the store's error (the caller then links the first alerts only)
   */
  put(id: string, set: AlertSet, expiresAtMs: number): Promise<void>;
  /**
   * The set, or `undefined` when absent or expired.
   * @throws the store's error
   */
  get(id: string, nowMs: number): Promise<AlertSet | undefined>;
}

const setKey = (id: string) => `set#${id}`;

const setItemSchema = z.object({
  fingerprints: z.optional(z.string()),
  groupKey: z.optional(z.string()),
  expiresAt: z.optional(z.number()),
});

export class DynamoDbAlertSetStore implements AlertSetStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, options: { tableName: string }) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = options.tableName;
  }

  async put(id: string, set: AlertSet, expiresAtMs: number): Promise<void> {
    const item = {
      pk: setKey(id),
      fingerprints: JSON.stringify(set.fingerprints.slice(0, MAX_SET_ALERTS).map(keyPart)),
      groupKey: recordText(set.groupKey),
      expiresAt: Math.ceil(expiresAtMs / 1000),
    };
    await this.#doc.send(new PutCommand({ TableName: this.#table, Item: item }));
  }

  async get(id: string, nowMs: number): Promise<AlertSet | undefined> {
    const out = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: setKey(id) }, ConsistentRead: true }),
    );
    const item = parseOptional(setItemSchema, out.Item);
    if (!item?.fingerprints || (item.expiresAt ?? 0) * 1000 <= nowMs) return undefined;
    return {
      fingerprints: parseItem(z.array(z.string()), JSON.parse(item.fingerprints)),
      groupKey: item.groupKey ?? '',
    };
  }
}
