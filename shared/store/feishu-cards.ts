/**
 * The Feishu app channel's cards (`shared/channels/feishu/app-channel.ts`): one card per alert group and
 * channel instance, its identity (`chat_id`, `message_id`, as the Slack app keeps `channel` and `ts`), the
 * card as first sent, the group's state the card shows, and who it @-mentioned (for urgent escalation).
 * Kept in the one table (partition key `pk`, TTL attribute `expiresAt`):
 * - `feishu-card#<channel instance>#<sha256 of groupKey>`: `chatId`, `messageId`, `cardJson`, `firing`,
 *   `mentioned`, the state fields, `urgentAt`, and `groupKey` kept for reading the table by hand.
 * Follow-ups (the acknowledgement, the escalation, the resolve) find the card by the group key each alert
 * record keeps, whatever group key their own notification would carry. Kept as every group message is
 * (`./group-messages.ts`); `save` writes only while the stored card is still the message `messageId`.
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/create (`message_id`)
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as z from '../core/zod.js';
import { DynamoDbGroupMessageStore, type GroupMessageStore } from './group-messages.js';
import { parseItem } from './stored-item.js';

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
export type FeishuCardStore = GroupMessageStore<FeishuCard>;

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
type CardItem = z.infer<typeof cardItemSchema>;

/** The card JSON as sent: an object, opaque to the store. */
const storedCardSchema = z.record(z.string(), z.unknown());

/** A card as its item holds it, and back. */
const CARD_LAYOUT = {
  prefix: 'feishu-card',
  idAttribute: 'messageId',
  schema: cardItemSchema,
  toItem: ({ card, ...rest }: FeishuCard) => ({ ...rest, cardJson: JSON.stringify(card) }),
  fromItem: ({ pk: _pk, groupKey: _g, cardJson, expiresAt: _e, ...rest }: CardItem): FeishuCard => ({
    ...rest,
    firing: rest.firing ?? [],
    mentioned: rest.mentioned ?? [],
    card: parseItem(storedCardSchema, JSON.parse(cardJson)),
  }),
};

/** The Feishu app's cards in the table (see the file header). */
export class DynamoDbFeishuCardStore extends DynamoDbGroupMessageStore<FeishuCard, CardItem> {
  /** @param options.ttlSeconds how long a card is kept after its last write, seconds (`DEDUPE_TTL_SECONDS`) */
  constructor(client: DynamoDBClient, options: { tableName: string; ttlSeconds: number }) {
    super(client, options, CARD_LAYOUT);
  }
}
