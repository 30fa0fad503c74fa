/**
 * DynamoDB adapter of {@link DedupeStore}: one item per alert notification event.
 *
 * Item: `pk` (the event key), `pending` (string set of channels still to deliver; absent once all
 * delivered, since DynamoDB sets cannot be empty), `delivered` (string set), `leaseUntil` (epoch ms),
 * `claimedAt` (epoch ms), `expiresAt` (epoch seconds, the table's TTL attribute).
 *
 * Built on single-item conditional writes only (no transactions), which real DynamoDB and dynalite
 * both support. DynamoDB deletes expired items late and dynalite never does, so reads treat an item
 * whose `expiresAt` has passed as absent.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { noteFiring } from './flap-record.js';
import type { Claim, DedupeStore, FlapRun } from './store.js';

export interface DynamoDbDedupeStoreOptions {
  tableName: string;
  /** How long an item is kept, seconds. */
  ttlSeconds: number;
  /** How long a claim excludes other deliverers, milliseconds; must exceed the delivery budget. */
  leaseMs?: number;
}

/** Longer than the whole delivery budget (retries included) and the Lambda time-out (30 s). */
export const DEFAULT_LEASE_MS = 60_000;

export class DynamoDbDedupeStore implements DedupeStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ttlSeconds: number;
  readonly #leaseMs: number;

  /** @param client a configured DynamoDB client (real AWS, dynalite or any endpoint) */
  constructor(client: DynamoDBClient, options: DynamoDbDedupeStoreOptions) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  async claim(key: string, channels: string[], nowMs: number): Promise<Claim> {
    if (await this.#putIfAbsent(key, channels, nowMs)) return { decision: 'first notification', pending: [...channels] };
    const item = await this.#get(key);
    if (!item || item.expiresAt * 1000 <= nowMs) {
      // Expired or deleted between our two calls: one more conditional put settles who owns it.
      return (await this.#putIfAbsent(key, channels, nowMs))
        ? { decision: 'first notification', pending: [...channels] }
        : { decision: 'in flight', pending: [] };
    }
    const pending = item.pending ? [...item.pending] : [];
    if (pending.length === 0) {
      await this.#keepAlive(key, item.expiresAt, nowMs);
      return { decision: 'already notified', pending: [] };
    }
    if (item.leaseUntil > nowMs) return { decision: 'in flight', pending: [] };
    return (await this.#takeLease(key, item.leaseUntil, nowMs))
      ? { decision: 'repair', pending: pending.filter((c) => channels.includes(c)) }
      : { decision: 'in flight', pending: [] };
  }

  async markDelivered(key: string, channel: string | string[]): Promise<void> {
    const channels = new Set([channel].flat());
    if (channels.size === 0) return;
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: key },
        UpdateExpression: 'DELETE pending :c ADD delivered :c',
        ExpressionAttributeValues: { ':c': channels },
      }),
    );
  }

  /**
   * An alert still being resent (`repeat_interval`) is still firing: once past half its TTL, its
   * record is extended, so an alert firing longer than the TTL is not announced again as new.
   * One write per half-TTL per alert, not one per resend.
   */
  async #keepAlive(key: string, expiresAtSec: number, nowMs: number): Promise<void> {
    const nowSec = Math.floor(nowMs / 1000);
    if (expiresAtSec - nowSec > this.#ttlSeconds / 2) return;
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: key },
        UpdateExpression: 'SET expiresAt = :exp',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':exp': nowSec + this.#ttlSeconds },
      }),
    ).catch(ignoreConditionFailed);
  }

  async release(key: string): Promise<void> {
    await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: { pk: key },
        UpdateExpression: 'SET leaseUntil = :zero',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    ).catch(ignoreConditionFailed);
  }

  /** See {@link DedupeStore.noteFiring}; the record is item `flap#<fingerprint>` (`flap-record.ts`). */
  noteFiring(fingerprint: string, startsAtMs: number, windowMs: number, nowMs: number): Promise<FlapRun> {
    return noteFiring(this.#doc, this.#table, fingerprint, { startsAtMs, windowMs, nowMs });
  }

  async #putIfAbsent(key: string, channels: string[], nowMs: number): Promise<boolean> {
    try {
      await this.#doc.send(
        new PutCommand({
          TableName: this.#table,
          Item: {
            pk: key,
            // An empty channel list (nothing configured) still records the event as seen.
            ...(channels.length ? { pending: new Set(channels) } : {}),
            leaseUntil: nowMs + this.#leaseMs,
            claimedAt: nowMs,
            expiresAt: Math.floor(nowMs / 1000) + this.#ttlSeconds,
          },
          ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :nowSec',
          ExpressionAttributeValues: { ':nowSec': Math.floor(nowMs / 1000) },
        }),
      );
      return true;
    } catch (err) {
      ignoreConditionFailed(err);
      return false;
    }
  }

  async #get(key: string): Promise<StoredEvent | undefined> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk: key }, ConsistentRead: true }));
    return out.Item as StoredEvent | undefined;
  }

  /** Optimistic lease take-over: succeeds only if nobody renewed the lease since we read it. */
  async #takeLease(key: string, seenLeaseUntil: number, nowMs: number): Promise<boolean> {
    try {
      await this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: key },
          UpdateExpression: 'SET leaseUntil = :lease',
          ConditionExpression: 'leaseUntil = :seen',
          ExpressionAttributeValues: { ':lease': nowMs + this.#leaseMs, ':seen': seenLeaseUntil },
        }),
      );
      return true;
    } catch (err) {
      ignoreConditionFailed(err);
      return false;
    }
  }
}

interface StoredEvent {
  pk: string;
  pending?: Set<string>;
  delivered?: Set<string>;
  leaseUntil: number;
  claimedAt: number;
  expiresAt: number;
}

function ignoreConditionFailed(err: unknown): void {
  if (err instanceof ConditionalCheckFailedException) return;
  if (err instanceof Error && err.name === 'ConditionalCheckFailedException') return;
  throw err;
}
