/**
 * The Slack-app channel's threads (`shared/channels/slack/app-channel.ts`): their type, the port, and its DynamoDB adapter, in
 * the one table (partition key `pk`, TTL attribute `expiresAt`, as the dedupe and alert records):
 * - `slack-thread#<channel instance>#<sha256 of groupKey>`: `channel`, `ts`, `contentJson` (the message as
 *   first posted), `firing` and `acknowledged` (fingerprints), and the state fields (`acknowledgedBy`, `acknowledgedAt`,
 *   `escalatedAt`, `resolvedAt`), with `groupKey` kept for reading the table by hand.
 * The group key is hashed because it repeats the group's labels and has no length bound (DynamoDB
 * refuses partition keys over 2,048 bytes). Single-item conditional writes only (dynalite has the same).
 * Expired items are treated as absent (DynamoDB deletes them late, dynalite never).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../core/zod.js';
import { ifConditionHolds } from './conditional.js';
import { parseItem, parseOptional } from './stored-item.js';

/** A Block Kit message as stored: Slack's JSON, opaque to the store. */
export interface StoredSlackContent {
  text: string;
  blocks: { type: string; [field: string]: unknown }[];
}

/** The stored thread of one alert group in one Slack-app channel instance. Times are RFC 3339. */
export interface SlackThread {
  /** Channel id (`C…`) as Slack answered `chat.postMessage`. */
  channel: string;
  /** The top-level message's `ts`: its id, and the `thread_ts` of every reply. */
  ts: string;
  /** The message as first posted, without its state line (re-rendered with the state on every update). */
  content: StoredSlackContent;
  /** Fingerprints of the group's alerts this thread announced that are still firing. */
  firing: string[];
  /** Fingerprints of the firing alerts acknowledged (`shared/channels/threads.ts`); absent in threads stored before it. */
  acknowledged?: string[];
  acknowledgedBy?: string;
  acknowledgedAt?: string;
  escalatedAt?: string;
  /** Set when no alert of the thread is firing any more: the thread is closed. */
  resolvedAt?: string;
}

/** Port of the thread store (one adapter, {@link DynamoDbSlackThreadStore}); every write is a single-item conditional write. */
export interface SlackThreadStore {
  /** The thread of `groupKey` in channel instance `channelName`; `undefined` when none or expired. */
  get(channelName: string, groupKey: string, nowMs: number): Promise<SlackThread | undefined>;
  /**
   * Stores a new thread unless an open one (not resolved) exists: of concurrent posters one wins.
   * @returns false when an open thread was already stored
   */
  create(channelName: string, groupKey: string, thread: SlackThread, nowMs: number): Promise<boolean>;
  /** Stores the thread's new state; only if the stored thread is still the message `thread.ts`. */
  save(channelName: string, groupKey: string, thread: SlackThread, nowMs: number): Promise<void>;
}

/** The item key of a group's thread in one channel instance. */
export const slackThreadKey = (channelName: string, groupKey: string) =>
  `slack-thread#${channelName}#${createHash('sha256').update(groupKey, 'utf8').digest('hex')}`;

const threadItemSchema = z.object({
  pk: z.string(),
  groupKey: z.string(),
  channel: z.string(),
  ts: z.string(),
  contentJson: z.string(),
  firing: z.optional(z.array(z.string())),
  acknowledged: z.optional(z.array(z.string())),
  acknowledgedBy: z.optional(z.string()),
  acknowledgedAt: z.optional(z.string()),
  escalatedAt: z.optional(z.string()),
  resolvedAt: z.optional(z.string()),
  expiresAt: z.number(),
});
type ThreadItem = z.infer<typeof threadItemSchema>;

/** The Block Kit message as stored: Slack's JSON (`text`, `blocks`), kept as it was posted. */
const storedContentSchema = z.looseObject({
  text: z.string(),
  blocks: z.array(z.looseObject({ type: z.string() })),
});

export class DynamoDbSlackThreadStore implements SlackThreadStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ttlSeconds: number;

  /** @param options.ttlSeconds how long a thread is kept after its last write, seconds (`DEDUPE_TTL_SECONDS`) */
  constructor(client: DynamoDBClient, options: { tableName: string; ttlSeconds: number }) {
    this.#doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
  }

  async get(channelName: string, groupKey: string, nowMs: number): Promise<SlackThread | undefined> {
    const out = await this.#doc.send(
      new GetCommand({
        TableName: this.#table,
        Key: { pk: slackThreadKey(channelName, groupKey) },
        ConsistentRead: true,
      }),
    );
    const item = parseOptional(threadItemSchema, out.Item);
    if (!item || item.expiresAt <= Math.floor(nowMs / 1000)) return undefined;
    return {
      channel: item.channel,
      ts: item.ts,
      content: parseItem(storedContentSchema, JSON.parse(item.contentJson)),
      firing: item.firing ?? [],
      ...(item.acknowledged && { acknowledged: item.acknowledged }),
      ...(item.acknowledgedBy && { acknowledgedBy: item.acknowledgedBy }),
      ...(item.acknowledgedAt && { acknowledgedAt: item.acknowledgedAt }),
      ...(item.escalatedAt && { escalatedAt: item.escalatedAt }),
      ...(item.resolvedAt && { resolvedAt: item.resolvedAt }),
    };
  }

  async create(channelName: string, groupKey: string, thread: SlackThread, nowMs: number): Promise<boolean> {
    const created = await ifConditionHolds(
      this.#put({ channelName, groupKey }, thread, nowMs, {
        expression: 'attribute_not_exists(pk) OR attribute_exists(resolvedAt) OR expiresAt <= :nowSec',
        values: { ':nowSec': Math.floor(nowMs / 1000) },
      }).then(() => true),
    );
    return created ?? false;
  }

  async save(channelName: string, groupKey: string, thread: SlackThread, nowMs: number): Promise<void> {
    // A newer thread of the group replaced this one meanwhile (the condition fails): the update still goes to the message it was for.
    await ifConditionHolds(
      this.#put({ channelName, groupKey }, thread, nowMs, {
        expression: '#ts = :ts',
        values: { ':ts': thread.ts },
        names: { '#ts': 'ts' },
      }),
    );
  }

  /** Puts the thread of `groupKey` in `channelName` whole, under `condition`. @throws the SDK's error (a failed condition too) */
  async #put(
    { channelName, groupKey }: { channelName: string; groupKey: string },
    thread: SlackThread,
    nowMs: number,
    condition: { expression: string; values: Record<string, unknown>; names?: Record<string, string> },
  ): Promise<void> {
    const item: ThreadItem = {
      pk: slackThreadKey(channelName, groupKey),
      // The key holds the digest; the group key itself is for people reading the table (cut: it has no bound).
      groupKey: groupKey.slice(0, 1024),
      channel: thread.channel,
      ts: thread.ts,
      contentJson: JSON.stringify(thread.content),
      firing: thread.firing,
      acknowledged: thread.acknowledged,
      acknowledgedBy: thread.acknowledgedBy,
      acknowledgedAt: thread.acknowledgedAt,
      escalatedAt: thread.escalatedAt,
      resolvedAt: thread.resolvedAt,
      expiresAt: Math.floor(nowMs / 1000) + this.#ttlSeconds,
    };
    await this.#doc.send(
      new PutCommand({
        TableName: this.#table,
        Item: item,
        ConditionExpression: condition.expression,
        ExpressionAttributeValues: condition.values,
        ...(condition.names && { ExpressionAttributeNames: condition.names }),
      }),
    );
  }
}
