/**
 * The PagerDuty channel's storms (`shared/channels/pagerduty/storms.ts`): which alerts each storm's one
 * PagerDuty alert (`dedup_key` `group/<hash>`) stands for, and which of them resolved, so that the storm's
 * alert resolves when its last alert does, however Alertmanager batches the resolves, and an
 * acknowledgement of its alerts acknowledges it. In the one table (partition key `pk`, TTL `expiresAt`):
 * - `pagerduty-storm#<channel instance>#<dedup_key>`: `members` and `resolved` (string sets of member ids),
 *   `closedAt` (RFC 3339) once every member resolved.
 * A member id is the first {@link MEMBER_ID_CHARS} hex digits of the SHA-256 of the alert's own
 * `dedup_key` (its occurrence and generation), so a re-fire is a new member. Short ids keep a storm of
 * 10,000 alerts at ~240 KB with both sets full, under DynamoDB's 400 KB item limit; a collision among
 * 10,000 ids of 48 bits has a probability of about 2·10⁻⁷. Every write is one single-item update; the sets
 * only grow, so a repeated write (a retry, an HA peer's copy) changes nothing.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../core/zod.js';
import { ifConditionHolds } from './conditional.js';
import { parseOptional, stringSet } from './stored-item.js';

/** Hex digits of a member id (48 bits). */
export const MEMBER_ID_CHARS = 12;

/** The member id of an alert announced under PagerDuty `dedup_key` `alertKey`. */
export const stormMemberId = (alertKey: string): string =>
  createHash('sha256').update(alertKey, 'utf8').digest('hex').slice(0, MEMBER_ID_CHARS);

/** One storm as stored. */
export interface StoredStorm {
  members: ReadonlySet<string>;
  resolved: ReadonlySet<string>;
  /** Set once every member resolved (RFC 3339). */
  closedAt?: string;
}

/** Port of the storm store (one adapter, {@link DynamoDbPagerDutyStormStore}). */
export interface PagerDutyStormStore {
  /** The storm of `dedupKey` in channel instance `channel`; `undefined` when none or expired. */
  get(channel: string, dedupKey: string, nowMs: number): Promise<StoredStorm | undefined>;
  /**
   * Adds `members` to the storm (before its `trigger` is sent). A closed storm starts over: PagerDuty opens a
   * new alert for a `trigger` whose key's alert is resolved.
   */
  open(channel: string, dedupKey: string, members: readonly string[], nowMs: number): Promise<void>;
  /**
   * Marks `members` (members of the storm) resolved.
   * @returns whether every member of the storm has now resolved (it is closed)
   */
  resolve(channel: string, dedupKey: string, members: readonly string[], nowMs: number): Promise<boolean>;
}

const itemSchema = z.object({
  members: z.optional(stringSet()),
  resolved: z.optional(stringSet()),
  closedAt: z.optional(z.string()),
  expiresAt: z.number(),
});

const stormKey = (channel: string, dedupKey: string) => `pagerduty-storm#${channel}#${dedupKey}`;

export class DynamoDbPagerDutyStormStore implements PagerDutyStormStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ttlSeconds: number;

  /** @param options.ttlSeconds how long a storm is kept after its last write, seconds (`DEDUPE_TTL_SECONDS`) */
  constructor(client: DynamoDBClient, options: { tableName: string; ttlSeconds: number }) {
    this.#doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.#table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
  }

  async get(channel: string, dedupKey: string, nowMs: number): Promise<StoredStorm | undefined> {
    const out = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: stormKey(channel, dedupKey) }, ConsistentRead: true }),
    );
    return storedOf(parseOptional(itemSchema, out.Item), nowMs);
  }

  async open(channel: string, dedupKey: string, members: readonly string[], nowMs: number): Promise<void> {
    if (members.length === 0) return;
    const base = { TableName: this.#table, Key: { pk: stormKey(channel, dedupKey) } };
    const values = { ':m': new Set(members), ':exp': this.#expiry(nowMs), ':nowSec': Math.floor(nowMs / 1000) };
    // An open (or new, or expired-but-not-deleted) storm grows; a closed one starts over.
    const grown = await ifConditionHolds(
      this.#doc
        .send(
          new UpdateCommand({
            ...base,
            UpdateExpression: 'ADD members :m SET expiresAt = :exp',
            ConditionExpression:
              'attribute_not_exists(closedAt) AND (attribute_not_exists(expiresAt) OR expiresAt > :nowSec)',
            ExpressionAttributeValues: values,
          }),
        )
        .then(() => true),
    );
    if (grown) return;
    await this.#doc.send(
      new UpdateCommand({
        ...base,
        UpdateExpression: 'SET members = :m, expiresAt = :exp REMOVE resolved, closedAt',
        ExpressionAttributeValues: { ':m': values[':m'], ':exp': values[':exp'] },
      }),
    );
  }

  async resolve(channel: string, dedupKey: string, members: readonly string[], nowMs: number): Promise<boolean> {
    const out = await ifConditionHolds(
      this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: stormKey(channel, dedupKey) },
          UpdateExpression: `${members.length ? 'ADD resolved :r ' : ''}SET expiresAt = :exp`,
          // An expired storm (DynamoDB deletes late) is none: its expiry is not renewed.
          ConditionExpression: 'attribute_exists(members) AND expiresAt > :nowSec',
          ExpressionAttributeValues: {
            ...(members.length && { ':r': new Set(members) }),
            ':exp': this.#expiry(nowMs),
            ':nowSec': Math.floor(nowMs / 1000),
          },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    const storm = storedOf(parseOptional(itemSchema, out?.Attributes), nowMs);
    if (!storm) return false;
    const closed = [...storm.members].every((m) => storm.resolved.has(m));
    if (closed && !storm.closedAt)
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: stormKey(channel, dedupKey) },
          UpdateExpression: 'SET closedAt = if_not_exists(closedAt, :at)',
          ExpressionAttributeValues: { ':at': new Date(nowMs).toISOString() },
        }),
      );
    return closed;
  }

  #expiry(nowMs: number): number {
    return Math.floor(nowMs / 1000) + this.#ttlSeconds;
  }
}

function storedOf(item: z.infer<typeof itemSchema> | undefined, nowMs: number): StoredStorm | undefined {
  if (!item || item.expiresAt <= Math.floor(nowMs / 1000)) return undefined;
  return {
    members: item.members ?? new Set(),
    resolved: item.resolved ?? new Set(),
    ...(item.closedAt && { closedAt: item.closedAt }),
  };
}
