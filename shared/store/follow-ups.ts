/**
 * Follow-ups still owed: a follow-up request (the "acknowledged by X" notice to one channel, naming the
 * alert occurrences it is about) that a platform did not take in time (Slack's and PagerDuty's 429 last
 * longer than one request's budget), kept until it is delivered or its retries run out. The request is
 * stored, not its rendering: the retry renders it again from the alert records, as the first try did.
 *
 * Item: `followup#<id>` in the dedupe table: `request` (JSON), `dueAt` (epoch ms: when the next try
 * may start), `attempts`, `firstAt` (epoch ms: the first try), `expiresAt` (TTL, epoch seconds). Every
 * write is a single-item conditional write: {@link FollowUpStore.take} lets one runner at a time try a
 * follow-up (an HA peer, a schedule that fires twice), as the dedupe claim does for alerts.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../core/zod.js';
import { ifConditionHolds } from './conditional.js';
import type { NotificationKind } from '../render/notification.js';

/** Key prefix of follow-up items. */
export const FOLLOW_UP_SPACE = 'followup#';

/** A follow-up request: what to send again, to whom. */
export interface FollowUpRequest {
  /** The notice's kind (`acknowledged`). */
  kind: Exclude<NotificationKind, 'alert'>;
  /** The channel instance's name (`slack`, `pagerduty-oncall`). */
  channel: string;
  /** The alert occurrences it is about: fingerprint and `startsAt` (RFC 3339, normalised). */
  alerts: { fingerprint: string; startsAt: string }[];
}

/** A stored follow-up. Times are epoch milliseconds. */
export interface FollowUp {
  id: string;
  request: FollowUpRequest;
  dueAtMs: number;
  /** Tries made so far, the first (synchronous) one included. */
  attempts: number;
  firstAtMs: number;
}

/** Port: follow-ups owed; one adapter, {@link DynamoDbFollowUpStore}. Times are epoch milliseconds. */
export interface FollowUpStore {
  /**
   * Keeps a new follow-up (once per id: a second add of the same id changes nothing).
   * @param keepUntilMs when the item may be deleted (after the last retry could run)
   * @throws the store's error
   */
  add(followUp: FollowUp, keepUntilMs: number): Promise<void>;
  /**
   * Takes the follow-up for one try when it is due: moves its due time `leaseMs` on (so another runner
   * does not try it meanwhile, and a runner that dies leaves it to the next) and counts the attempt.
   * @returns the follow-up as taken (`attempts` counting this try), or `undefined` when it is gone
   *   (delivered, given up) or not due (another runner has it)
   * @throws the store's error
   */
  take(id: string, nowMs: number, leaseMs: number): Promise<FollowUp | undefined>;
  /** Sets when the next try may start. @throws the store's error */
  retryAt(id: string, dueAtMs: number): Promise<void>;
  /** Drops the follow-up (delivered, or given up). @throws the store's error */
  remove(id: string): Promise<void>;
  /** Every follow-up still owed (`npm start` arms its timers again at start: a Scan). @throws the store's error */
  list(): Promise<FollowUp[]>;
}

const followUpKey = (id: string) => `${FOLLOW_UP_SPACE}${id}`;

const requestSchema = z.object({
  kind: z.enum(['acknowledged', 'escalation']),
  channel: z.string(),
  alerts: z.array(z.object({ fingerprint: z.string(), startsAt: z.string() })),
});

const itemSchema = z.object({
  pk: z.string(),
  request: z.string(),
  dueAt: z.number(),
  attempts: z.number(),
  firstAt: z.number(),
});

function fromItem(item: Record<string, unknown>): FollowUp {
  const parsed = itemSchema.parse(item);
  return {
    id: parsed.pk.slice(FOLLOW_UP_SPACE.length),
    request: requestSchema.parse(JSON.parse(parsed.request)),
    dueAtMs: parsed.dueAt,
    attempts: parsed.attempts,
    firstAtMs: parsed.firstAt,
  };
}

export class DynamoDbFollowUpStore implements FollowUpStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, options: { tableName: string }) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = options.tableName;
  }

  async add(f: FollowUp, keepUntilMs: number): Promise<void> {
    const item = {
      pk: followUpKey(f.id),
      request: JSON.stringify(f.request),
      dueAt: f.dueAtMs,
      attempts: f.attempts,
      firstAt: f.firstAtMs,
      expiresAt: Math.ceil(keepUntilMs / 1000),
    };
    await ifConditionHolds(
      this.#doc.send(
        new PutCommand({ TableName: this.#table, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }),
      ),
    );
  }

  async take(id: string, nowMs: number, leaseMs: number): Promise<FollowUp | undefined> {
    const out = await ifConditionHolds(
      this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: followUpKey(id) },
          UpdateExpression: 'SET dueAt = :lease ADD attempts :one',
          ConditionExpression: 'attribute_exists(pk) AND dueAt <= :now',
          ExpressionAttributeValues: { ':now': nowMs, ':lease': nowMs + leaseMs, ':one': 1 },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return out?.Attributes ? fromItem(out.Attributes) : undefined;
  }

  async retryAt(id: string, dueAtMs: number): Promise<void> {
    await ifConditionHolds(
      this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: followUpKey(id) },
          UpdateExpression: 'SET dueAt = :due',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':due': dueAtMs },
        }),
      ),
    );
  }

  async remove(id: string): Promise<void> {
    await this.#doc.send(new DeleteCommand({ TableName: this.#table, Key: { pk: followUpKey(id) } }));
  }

  async list(): Promise<FollowUp[]> {
    const found: FollowUp[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.#doc.send(
        new ScanCommand({
          TableName: this.#table,
          ConsistentRead: true,
          FilterExpression: 'begins_with(pk, :space)',
          ExpressionAttributeValues: { ':space': FOLLOW_UP_SPACE },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) found.push(fromItem(item));
      start = page.LastEvaluatedKey;
    } while (start);
    return found;
  }
}
