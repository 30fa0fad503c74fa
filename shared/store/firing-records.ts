/**
 * The alerts last announced firing: every alert record (`alert-record-items.ts`) whose occurrence is
 * `firing` and not expired. What a starting `npm start` checks against Prometheus or Alertmanager to
 * announce the resolves it missed while it was down (`shared/pipeline/catch-up.ts`). Reads the whole
 * table (a Scan, filtered), once per start, as `scheduledEscalations` does; Lambda never calls it.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { AlertRecord } from './alert-record.js';
import { fromItem } from './alert-record-items.js';
import { RECORD_SPACE } from './keys.js';

/** Port: the records of alerts announced firing. */
export interface FiringRecords {
  /**
   * @param nowMs epoch milliseconds (expired records are left out, as DynamoDB's TTL would delete them)
   * @throws the store's error
   */
  list(nowMs: number): Promise<AlertRecord[]>;
}

/** {@link FiringRecords} on the dedupe table. */
export class DynamoDbFiringRecords implements FiringRecords {
  readonly #doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    private readonly tableName: string,
  ) {
    this.#doc = DynamoDBDocumentClient.from(client);
  }

  async list(nowMs: number): Promise<AlertRecord[]> {
    const found: AlertRecord[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.#doc.send(
        new ScanCommand({
          TableName: this.tableName,
          ConsistentRead: true,
          FilterExpression: 'begins_with(#pk, :alert) AND #st = :firing AND #exp > :nowSec',
          ExpressionAttributeNames: { '#pk': 'pk', '#st': 'status', '#exp': 'expiresAt' },
          ExpressionAttributeValues: {
            ':alert': RECORD_SPACE,
            ':firing': 'firing',
            ':nowSec': Math.floor(nowMs / 1000),
          },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) found.push(fromItem(item));
      start = page.LastEvaluatedKey;
    } while (start);
    return found;
  }
}
