/**
 * The Slack-app channel's threads (`shared/channels/slack/app-channel.ts`): their type, the port, and its DynamoDB adapter, in
 * the one table (partition key `pk`, TTL attribute `expiresAt`, as the dedupe and alert records):
 * - `slack-thread#<channel instance>#<sha256 of groupKey>`: `channel`, `ts`, `contentJson` (the message as
 *   first posted), `firing` (fingerprints), and the state fields (`acknowledgedBy`, `acknowledgedAt`,
 *   `escalatedAt`, `resolvedAt`), with `groupKey` kept for reading the table by hand.
 * The group key is hashed because it repeats the group's labels and has no length bound (DynamoDB
 * refuses partition keys over 2,048 bytes). Single-item conditional writes only (dynalite has the same).
 * Expired items are treated as absent (DynamoDB deletes them late, dynalite never).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';

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
export const slackThreadKey = (channelName: string, groupKey: string) => `slack-thread#${channelName}#${createHash('sha256').update(groupKey, 'utf8').digest('hex')}`;

interface ThreadItem {
  pk: string;
  groupKey: string;
  channel: string;
  ts: string;
  contentJson: string;
  firing: string[];
  acknowledgedBy?: string;
  acknowledgedAt?: string;
  escalatedAt?: string;
  resolvedAt?: string;
  expiresAt: number;
}

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
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk: slackThreadKey(channelName, groupKey) }, ConsistentRead: true }));
    const item = out.Item as ThreadItem | undefined;
    if (!item || item.expiresAt <= Math.floor(nowMs / 1000)) return undefined;
    return {
      channel: item.channel,
      ts: item.ts,
      content: JSON.parse(item.contentJson) as StoredSlackContent,
      firing: item.firing ?? [],
      ...(item.acknowledgedBy && { acknowledgedBy: item.acknowledgedBy }),
      ...(item.acknowledgedAt && { acknowledgedAt: item.acknowledgedAt }),
      ...(item.escalatedAt && { escalatedAt: item.escalatedAt }),
      ...(item.resolvedAt && { resolvedAt: item.resolvedAt }),
    };
  }

  async create(channelName: string, groupKey: string, thread: SlackThread, nowMs: number): Promise<boolean> {
    try {
      await this.#put(channelName, groupKey, thread, nowMs, 'attribute_not_exists(pk) OR attribute_exists(resolvedAt) OR expiresAt <= :nowSec', { ':nowSec': Math.floor(nowMs / 1000) });
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException || (err as Error).name === 'ConditionalCheckFailedException') return false;
      throw err;
    }
  }

  async save(channelName: string, groupKey: string, thread: SlackThread, nowMs: number): Promise<void> {
    try {
      await this.#put(channelName, groupKey, thread, nowMs, '#ts = :ts', { ':ts': thread.ts }, { '#ts': 'ts' });
    } catch (err) {
      // A newer thread of the group replaced this one meanwhile: the update still goes to the message it was for.
      if (!(err instanceof ConditionalCheckFailedException || (err as Error).name === 'ConditionalCheckFailedException')) throw err;
    }
  }

  async #put(channelName: string, groupKey: string, thread: SlackThread, nowMs: number, condition: string, values: Record<string, unknown>, names?: Record<string, string>): Promise<void> {
    const item: ThreadItem = {
      pk: slackThreadKey(channelName, groupKey),
      // The key holds the digest; the group key itself is for people reading the table (cut: it has no bound).
      groupKey: groupKey.slice(0, 1024),
      channel: thread.channel,
      ts: thread.ts,
      contentJson: JSON.stringify(thread.content),
      firing: thread.firing,
      acknowledgedBy: thread.acknowledgedBy,
      acknowledgedAt: thread.acknowledgedAt,
      escalatedAt: thread.escalatedAt,
      resolvedAt: thread.resolvedAt,
      expiresAt: Math.floor(nowMs / 1000) + this.#ttlSeconds,
    };
    await this.#doc.send(new PutCommand({ TableName: this.#table, Item: item, ConditionExpression: condition, ExpressionAttributeValues: values, ...(names && { ExpressionAttributeNames: names }) }));
  }
}
