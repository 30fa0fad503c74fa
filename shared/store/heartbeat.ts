/**
 * Heartbeat state in the dedupe table, one item per Alertmanager (by its `externalURL`) plus one
 * list of the Alertmanagers seen, so the check reads a few items instead of scanning the table:
 * - `heartbeat#<externalURL>`: `lastSeen` (epoch ms of the latest heartbeat), `missingSince`
 *   (epoch ms, set while `AlertingPipelineHeartbeatMissing` is raised for it: its `startsAt`);
 * - `heartbeats`: `alertmanagers`, a string set of every `externalURL` seen.
 * Neither expires: an Alertmanager that was seen and falls silent must keep alerting. To forget a
 * decommissioned one, delete its `heartbeat#…` item (the check then ignores it).
 *
 * Single-item conditional writes only (dynalite and DynamoDB alike).
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';

export interface HeartbeatRecord {
  /** The Alertmanager's `externalURL`. */
  alertmanager: string;
  /** When its latest heartbeat arrived, epoch milliseconds. */
  lastSeenMs: number;
  /** Set while its missing-heartbeat alert is raised: that alert's `startsAt`, epoch milliseconds. */
  missingSinceMs?: number;
}

/** Port for heartbeat state; one adapter, {@link DynamoDbHeartbeatStore}. */
export interface HeartbeatStore {
  /** Records a heartbeat from `alertmanager` at `nowMs` (never moves `lastSeen` back). */
  seen(alertmanager: string, nowMs: number): Promise<void>;
  /** Every Alertmanager seen, with its state. */
  all(): Promise<HeartbeatRecord[]>;
  /** Marks the heartbeat missing since `sinceMs`; `false` when it already was (another check raised it). */
  markMissing(alertmanager: string, sinceMs: number): Promise<boolean>;
  /** Clears the mark set with `sinceMs` (a newer mark stays). */
  clearMissing(alertmanager: string, sinceMs: number): Promise<void>;
}

const LIST_KEY = { pk: 'heartbeats' };
const itemKey = (alertmanager: string) => ({ pk: `heartbeat#${alertmanager}` });

export class DynamoDbHeartbeatStore implements HeartbeatStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = tableName;
  }

  async seen(alertmanager: string, nowMs: number): Promise<void> {
    await Promise.all([
      this.#conditional({ Key: itemKey(alertmanager), UpdateExpression: 'SET lastSeen = :now', ConditionExpression: 'attribute_not_exists(lastSeen) OR lastSeen < :now', ExpressionAttributeValues: { ':now': nowMs } }),
      this.#doc.send(new UpdateCommand({ TableName: this.#table, Key: LIST_KEY, UpdateExpression: 'ADD alertmanagers :am', ExpressionAttributeValues: { ':am': new Set([alertmanager]) } })),
    ]);
  }

  async all(): Promise<HeartbeatRecord[]> {
    const list = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: LIST_KEY, ConsistentRead: true }));
    const names = [...((list.Item?.alertmanagers as Set<string> | undefined) ?? [])].sort();
    const items = await Promise.all(names.map((name) => this.#doc.send(new GetCommand({ TableName: this.#table, Key: itemKey(name), ConsistentRead: true }))));
    return items.flatMap((out, i) => {
      const item = out.Item as { lastSeen?: number; missingSince?: number } | undefined;
      if (item?.lastSeen === undefined) return [];
      return [{ alertmanager: names[i]!, lastSeenMs: item.lastSeen, ...(item.missingSince !== undefined && { missingSinceMs: item.missingSince }) }];
    });
  }

  markMissing(alertmanager: string, sinceMs: number): Promise<boolean> {
    return this.#conditional({ Key: itemKey(alertmanager), UpdateExpression: 'SET missingSince = :s', ConditionExpression: 'attribute_exists(lastSeen) AND attribute_not_exists(missingSince)', ExpressionAttributeValues: { ':s': sinceMs } });
  }

  async clearMissing(alertmanager: string, sinceMs: number): Promise<void> {
    await this.#conditional({ Key: itemKey(alertmanager), UpdateExpression: 'REMOVE missingSince', ConditionExpression: 'missingSince = :s', ExpressionAttributeValues: { ':s': sinceMs } });
  }

  /** @returns `false` when the condition failed */
  async #conditional(input: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<boolean> {
    try {
      await this.#doc.send(new UpdateCommand({ TableName: this.#table, ...input }));
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException || (err as Error).name === 'ConditionalCheckFailedException') return false;
      throw err;
    }
  }
}
