/**
 * The Slack-app channel's threads (`shared/channels/slack/app-channel.ts`), one per alert group and channel
 * instance, kept as every group message is (`./group-messages.ts`):
 * - `slack-thread#<channel instance>#<sha256 of groupKey>`: `channel`, `ts`, `contentJson` (the message as
 *   first posted), `firing` and `acknowledged` (fingerprints), and the state fields (`acknowledgedBy`, `acknowledgedAt`,
 *   `escalatedAt`, `resolvedAt`), with `groupKey` kept for reading the table by hand.
 * `save` writes only while the stored thread is still the message `ts`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as z from '../core/zod.js';
import { DynamoDbGroupMessageStore, type GroupMessageStore } from './group-messages.js';
import { parseItem } from './stored-item.js';

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
export type SlackThreadStore = GroupMessageStore<SlackThread>;

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

/** A thread as its item holds it, and back. */
const THREAD_LAYOUT = {
  prefix: 'slack-thread',
  idAttribute: 'ts',
  schema: threadItemSchema,
  toItem: (thread: SlackThread) => ({
    channel: thread.channel,
    ts: thread.ts,
    contentJson: JSON.stringify(thread.content),
    firing: thread.firing,
    acknowledged: thread.acknowledged,
    acknowledgedBy: thread.acknowledgedBy,
    acknowledgedAt: thread.acknowledgedAt,
    escalatedAt: thread.escalatedAt,
    resolvedAt: thread.resolvedAt,
  }),
  fromItem: (item: ThreadItem): SlackThread => ({
    channel: item.channel,
    ts: item.ts,
    content: parseItem(storedContentSchema, JSON.parse(item.contentJson)),
    firing: item.firing ?? [],
    ...(item.acknowledged && { acknowledged: item.acknowledged }),
    ...(item.acknowledgedBy && { acknowledgedBy: item.acknowledgedBy }),
    ...(item.acknowledgedAt && { acknowledgedAt: item.acknowledgedAt }),
    ...(item.escalatedAt && { escalatedAt: item.escalatedAt }),
    ...(item.resolvedAt && { resolvedAt: item.resolvedAt }),
  }),
};

/** The Slack-app threads in the table (see the file header). */
export class DynamoDbSlackThreadStore extends DynamoDbGroupMessageStore<SlackThread, ThreadItem> {
  /** @param options.ttlSeconds how long a thread is kept after its last write, seconds (`DEDUPE_TTL_SECONDS`) */
  constructor(client: DynamoDBClient, options: { tableName: string; ttlSeconds: number }) {
    super(client, options, THREAD_LAYOUT);
  }
}
