/**
 * Platform callbacks already acted on, by their event id (Feishu's `header.event_id`), so that each is
 * acted on once: a callback replayed within its signature's replay window carries the same id and
 * changes nothing. One item per event in the one table, `callback-event#<platform>#<event id>`, claimed
 * with a single conditional put and kept {@link CALLBACK_EVENT_TTL_SECONDS} (past the 5-minute window
 * in which a replayed signature still verifies). Expired items count as absent (dynalite never deletes them).
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ifConditionHolds } from './conditional.js';

/** How long an event id is remembered, seconds: well past the signature's ±5-minute window. */
export const CALLBACK_EVENT_TTL_SECONDS = 3600;

/** Port: claims an event id once. */
export interface CallbackEventStore {
  /**
   * @param platform e.g. `feishu`
   * @returns true for the first claim of `eventId`, false when it was claimed before (a replay)
   */
  claim(platform: string, eventId: string, nowMs: number): Promise<boolean>;
}

export class DynamoDbCallbackEventStore implements CallbackEventStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = tableName;
  }

  async claim(platform: string, eventId: string, nowMs: number): Promise<boolean> {
    const nowSec = Math.floor(nowMs / 1000);
    // Hashed: the id is the platform's, of no fixed length or alphabet.
    const pk = `callback-event#${platform}#${createHash('sha256').update(eventId, 'utf8').digest('hex')}`;
    const put = new PutCommand({
      TableName: this.#table,
      Item: { pk, expiresAt: nowSec + CALLBACK_EVENT_TTL_SECONDS },
      ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :nowSec',
      ExpressionAttributeValues: { ':nowSec': nowSec },
    });
    return (await ifConditionHolds(this.#doc.send(put))) !== undefined;
  }
}
