/**
 * The one message a channel instance keeps per alert group and updates in place (the Slack app's thread,
 * the Feishu app's card): the port both use, and its DynamoDB adapter, generic over the message. Each
 * message type gives its {@link GroupMessageLayout} (its key prefix, the attribute of the platform's
 * message id, its item attributes); the semantics are the same for every type. In the one table
 * (partition key `pk`, TTL attribute `expiresAt`):
 * - `<prefix>#<channel instance>#<sha256 of groupKey>`: the message's attributes, `groupKey` (cut to 1,024
 *   characters, for reading the table by hand) and `expiresAt`.
 * The group key is hashed because it repeats the group's labels and has no length bound (DynamoDB refuses
 * partition keys over 2,048 bytes). Single-item conditional writes only (dynalite has the same); expired items
 * are treated as absent (DynamoDB deletes them late, dynalite never).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type * as z from '../core/zod.js';
import { ifConditionHolds } from './conditional.js';
import { parseOptional } from './stored-item.js';

/** Port of a group-message store (one adapter, {@link DynamoDbGroupMessageStore}). */
export interface GroupMessageStore<M> {
  /** The message of `groupKey` in channel instance `channelName`; `undefined` when none or expired. */
  get(channelName: string, groupKey: string, nowMs: number): Promise<M | undefined>;
  /**
   * Stores a new message unless an open one (not resolved) exists: of concurrent senders one wins.
   * @returns false when an open message was already stored
   */
  create(channelName: string, groupKey: string, message: M, nowMs: number): Promise<boolean>;
  /** Stores the message's new state; only if the stored one is still the same platform message (its id). */
  save(channelName: string, groupKey: string, message: M, nowMs: number): Promise<void>;
}

/** How one message type is kept: the item key's prefix, its id attribute, and its attributes both ways. */
export interface GroupMessageLayout<M, Item extends { expiresAt: number }> {
  /** The item key's prefix, e.g. `slack-thread`. */
  prefix: string;
  /** The attribute holding the platform's id of the message (`ts`, `messageId`): `save` is conditional on it. */
  idAttribute: string;
  /** The stored item's schema (`pk`, `groupKey`, `expiresAt` and the message's attributes). */
  schema: z.ZodMiniType<Item>;
  /** The message's attributes (its `resolvedAt` among them: a resolved message may be replaced). */
  toItem(message: M): Record<string, unknown>;
  /** The message of a stored item. */
  fromItem(item: Item): M;
}

/** The item key of a group's message of type `prefix` in one channel instance. */
export const groupMessageKey = (prefix: string, channelName: string, groupKey: string) =>
  `${prefix}#${channelName}#${createHash('sha256').update(groupKey, 'utf8').digest('hex')}`;

export class DynamoDbGroupMessageStore<M, Item extends { expiresAt: number }> implements GroupMessageStore<M> {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ttlSeconds: number;
  readonly #layout: GroupMessageLayout<M, Item>;

  /** @param options.ttlSeconds how long a message is kept after its last write, seconds (`DEDUPE_TTL_SECONDS`) */
  constructor(
    client: DynamoDBClient,
    options: { tableName: string; ttlSeconds: number },
    layout: GroupMessageLayout<M, Item>,
  ) {
    this.#doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
    this.#layout = layout;
  }

  async get(channelName: string, groupKey: string, nowMs: number): Promise<M | undefined> {
    const out = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: this.#key(channelName, groupKey) }, ConsistentRead: true }),
    );
    const item = parseOptional(this.#layout.schema, out.Item);
    if (!item || item.expiresAt <= Math.floor(nowMs / 1000)) return undefined;
    return this.#layout.fromItem(item);
  }

  async create(channelName: string, groupKey: string, message: M, nowMs: number): Promise<boolean> {
    const created = await ifConditionHolds(
      this.#put({ channelName, groupKey }, message, nowMs, {
        ConditionExpression: 'attribute_not_exists(pk) OR attribute_exists(resolvedAt) OR expiresAt <= :nowSec',
        ExpressionAttributeValues: { ':nowSec': Math.floor(nowMs / 1000) },
      }).then(() => true),
    );
    return created ?? false;
  }

  async save(channelName: string, groupKey: string, message: M, nowMs: number): Promise<void> {
    // A newer message of the group replaced this one meanwhile (the condition fails): the update still goes to
    // the message it was for.
    const item = this.#layout.toItem(message);
    await ifConditionHolds(
      this.#put({ channelName, groupKey }, message, nowMs, {
        ConditionExpression: '#id = :id',
        ExpressionAttributeNames: { '#id': this.#layout.idAttribute },
        ExpressionAttributeValues: { ':id': item[this.#layout.idAttribute] },
      }),
    );
  }

  #key(channelName: string, groupKey: string): string {
    return groupMessageKey(this.#layout.prefix, channelName, groupKey);
  }

  /** Puts the message of `groupKey` in `channelName` whole, under `condition`. @throws the SDK's error (a failed condition too) */
  async #put(
    { channelName, groupKey }: { channelName: string; groupKey: string },
    message: M,
    nowMs: number,
    condition: Pick<ConstructorParameters<typeof PutCommand>[0], 'ConditionExpression' | 'ExpressionAttributeNames'> & {
      ExpressionAttributeValues: Record<string, unknown>;
    },
  ): Promise<void> {
    const item = {
      ...this.#layout.toItem(message),
      pk: this.#key(channelName, groupKey),
      // The key holds the digest; the group key itself is for people reading the table (cut: it has no bound).
      groupKey: groupKey.slice(0, 1024),
      expiresAt: Math.floor(nowMs / 1000) + this.#ttlSeconds,
    };
    await this.#doc.send(new PutCommand({ TableName: this.#table, Item: item, ...condition }));
  }
}
