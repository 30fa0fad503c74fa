/**
 * The alert stores' one wiring (`alert-record.ts`): four ports over the alert record item, each with its
 * DynamoDB adapter, sharing one table client.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbAcknowledgementStore } from './alert-ack-dynamodb.js';
import { DynamoDbEscalationStore } from './alert-escalation-dynamodb.js';
import { DynamoDbHistoryStore } from './alert-history-dynamodb.js';
import { DynamoDbAlertRecordStore } from './alert-record-dynamodb.js';
import { RecordTable } from './alert-record-table.js';
import type { AlertStores } from './alert-record.js';

/**
 * The four alert stores over one table (`alert-record.ts`).
 * @param options.ttlSeconds how long records and history are kept after their last write, seconds
 */
export function alertStores(client: DynamoDBClient, options: { tableName: string; ttlSeconds: number }): AlertStores {
  const table = new RecordTable(client, options);
  return {
    records: new DynamoDbAlertRecordStore(table),
    history: new DynamoDbHistoryStore(table),
    acknowledgements: new DynamoDbAcknowledgementStore(table),
    escalations: new DynamoDbEscalationStore(table),
  };
}
