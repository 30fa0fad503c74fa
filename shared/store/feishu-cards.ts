/**
 * The Feishu app channel's cards (`shared/channels/feishu/app-channel.ts`): one card per alert group and
 * channel instance, its identity (`chat_id`, `message_id`, as the Slack app keeps `channel` and `ts`), the
 * card as first sent, the group's state the card shows, and who it @-mentioned (for urgent escalation).
 * Kept in the one table (partition key `pk`, TTL attribute `expiresAt`):
 * - `feishu-card#<channel instance>#<sha256 of groupKey>`: `chatId`, `messageId`, `cardJson`, `firing`,
 *   `mentioned`, the state fields, `urgentAt`, and `groupKey` kept for reading the table by hand.
 * Follow-ups (the acknowledgement, the escalation, the resolve) find the card by the group key each alert
 * record keeps, whatever group key their own notification would carry. Single-item conditional writes
 * only; expired items are treated as absent (DynamoDB deletes them late, dynalite never).
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/create (`message_id`)
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../core/zod.js';
import { ifConditionHolds } from './conditional.js';
import { parseItem, parseOptional } from './stored-item.js';

/** A card as sent: Feishu's card JSON, opaque to the store. */
export type StoredFeishuCard = { [field: string]: unknown };

/** A user the card @-mentioned, as Feishu's urgent API takes it (`user_id_type` and the id). */
export interface MentionedUser {
  type: 'open_id' | 'user_id';
  id: string;
}

/** The stored card of one alert group in one Feishu app channel instance. Times are RFC 3339. */
export interface FeishuCard {
  chatId: string;
  /** The card message's `message_id` (`om_…`): what `PATCH` updates and replies answer. */
  messageId: string;
  /** The card as first sent, without its state line and with its buttons (re-rendered on every update). */
  card: StoredFeishuCard;
  firing: string[];
  /** Fingerprints of the firing alerts acknowledged (`shared/channels/threads.ts`); absent in cards stored before it. */
  acknowledged?: string[];
  /** Users the card @-mentioned (emails resolved), for urgent escalation. */
  mentioned: MentionedUser[];
  acknowledgedBy?: string;
  acknowledgedAt?: string;
  escalatedAt?: string;
  resolvedAt?: string;
  /** When the card was escalated with Feishu's urgent API (so a retried escalation does not buzz twice). */
  urgentAt?: string;
}

/** Port of the card store (one adapter, {@link DynamoDbFeishuCardStore}). */
export interface FeishuCardStore {
  /** The card of `groupKey` in channel instance `channelName`; `undefined` when none or expired. */
  get(channelName: string, groupKey: string, nowMs: number): Promise<FeishuCard | undefined>;
  /**
   * Stores a new card unless an open one (not resolved) exists: of concurrent senders one wins.
   * @returns false when an open card was already stored
   */
  create(channelName: string, groupKey: string, card: FeishuCard, nowMs: number): Promise<boolean>;
  /** Stores the card's new state; only if the stored card is still the message `card.messageId`. */
  save(channelName: string, groupKey: string, card: FeishuCard, nowMs: number): Promise<void>;
}

/** The item key of a group's card in one channel instance. */
export const feishuCardKey = (channelName: string, groupKey: string) =>
  `feishu-card#${channelName}#${createHash('sha256').update(groupKey, 'utf8').digest('hex')}`;

const cardItemSchema = z.object({
  pk: z.string(),
  groupKey: z.string(),
  chatId: z.string(),
  messageId: z.string(),
  cardJson: z.string(),
  firing: z.optional(z.array(z.string())),
  mentioned: z.optional(z.array(z.object({ type: z.enum(['open_id', 'user_id']), id: z.string() }))),
  acknowledged: z.optional(z.array(z.string())),
  acknowledgedBy: z.optional(z.string()),
  acknowledgedAt: z.optional(z.string()),
  escalatedAt: z.optional(z.string()),
  resolvedAt: z.optional(z.string()),
  urgentAt: z.optional(z.string()),
  expiresAt: z.number(),
});
type CardItem = Omit<z.infer<typeof cardItemSchema>, 'firing' | 'mentioned'> & Omit<FeishuCard, 'card'>;

/** The card JSON as sent: an object, opaque to the store. */
const storedCardSchema = z.record(z.string(), z.unknown());

export class DynamoDbFeishuCardStore implements FeishuCardStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ttlSeconds: number;

  /** @param options.ttlSeconds how long a card is kept after its last write, seconds (`DEDUPE_TTL_SECONDS`) */
  constructor(client: DynamoDBClient, options: { tableName: string; ttlSeconds: number }) {
    this.#doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
  }

  async get(channelName: string, groupKey: string, nowMs: number): Promise<FeishuCard | undefined> {
    const out = await this.#doc.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: feishuCardKey(channelName, groupKey) },
        ConsistentRead: true,
      }),
    );
    const item = parseOptional(cardItemSchema, out.Item);
    if (!item || item.expiresAt <= Math.floor(nowMs / 1000)) return undefined;
    const { pk: _pk, groupKey: _g, cardJson, expiresAt: _e, ...rest } = item;
    const card = parseItem(storedCardSchema, JSON.parse(cardJson));
    return { ...rest, firing: rest.firing ?? [], mentioned: rest.mentioned ?? [], card };
  }

  async create(channelName: string, groupKey: string, card: FeishuCard, nowMs: number): Promise<boolean> {
    const created = await ifConditionHolds(
      this.#put({ channelName, groupKey }, card, nowMs, {
        ConditionExpression: 'attribute_not_exists(pk) OR attribute_exists(resolvedAt) OR expiresAt <= :nowSec',
        ExpressionAttributeValues: { ':nowSec': Math.floor(nowMs / 1000) },
      }).then(() => true),
    );
    return created ?? false;
  }

  async save(channelName: string, groupKey: string, card: FeishuCard, nowMs: number): Promise<void> {
    // A newer card of the group replaced this one meanwhile (the condition fails): the update still goes to the message it was for.
    await ifConditionHolds(
      this.#put({ channelName, groupKey }, card, nowMs, {
        ConditionExpression: 'messageId = :messageId',
        ExpressionAttributeValues: { ':messageId': card.messageId },
      }),
    );
  }

  /** Puts the card of `groupKey` in `channelName` whole, under `condition`. @throws the SDK's error (a failed condition too) */
  async #put(
    { channelName, groupKey }: { channelName: string; groupKey: string },
    card: FeishuCard,
    nowMs: number,
    condition: { ConditionExpression: string; ExpressionAttributeValues: Record<string, unknown> },
  ): Promise<void> {
    const { card: json, ...rest } = card;
    const item: CardItem = {
      ...rest,
      pk: feishuCardKey(channelName, groupKey),
      // The key holds the digest; the group key itself is for people reading the table (cut: it has no bound).
      groupKey: groupKey.slice(0, 1024),
      cardJson: JSON.stringify(json),
      expiresAt: Math.floor(nowMs / 1000) + this.#ttlSeconds,
    };
    await this.#doc.send(new PutCommand({ TableName: this.#table, Item: item, ...condition }));
  }
}
