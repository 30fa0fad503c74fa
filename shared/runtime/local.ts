/**
 * Where `npm start` keeps its dedupe ledger:
 * - `AWS_ENDPOINT_URL_DYNAMODB` set: that endpoint (DynamoDB Local, LocalStack…), table created if missing;
 * - else `TABLE_NAME` set: that table in real DynamoDB (standard AWS SDK configuration);
 * - else an embedded in-memory dynalite, gone when the process stops.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Config } from './config.js';
import { startLocalDynamoDb } from '../store/local-dynamodb.js';
import { DEFAULT_TABLE_NAME, ensureTable } from '../store/table.js';
import { AWS_CLIENT_DEFAULTS } from './aws-clients.js';

export interface DedupeTable {
  client: DynamoDBClient;
  /** For the start-up log line. */
  description: string;
  close(): Promise<void>;
}

/** Opens (and where local, creates) the dedupe table for `npm start`. */
export async function openDedupeTable(config: Config, env: Record<string, string | undefined>): Promise<DedupeTable> {
  const tableName = config.tableName ?? DEFAULT_TABLE_NAME;
  if (env.AWS_ENDPOINT_URL_DYNAMODB) {
    // The SDK reads AWS_ENDPOINT_URL_DYNAMODB itself.
    const client = new DynamoDBClient(AWS_CLIENT_DEFAULTS);
    await ensureTable(client, tableName);
    return { client, description: `table ${tableName} at AWS_ENDPOINT_URL_DYNAMODB`, close: async () => client.destroy() };
  }
  if (config.tableName) {
    const client = new DynamoDBClient(AWS_CLIENT_DEFAULTS);
    return { client, description: `DynamoDB table ${tableName}`, close: async () => client.destroy() };
  }
  const local = await startLocalDynamoDb(tableName);
  return { client: local.client, description: `embedded dynalite (in memory) at ${local.endpoint}`, close: local.close };
}
