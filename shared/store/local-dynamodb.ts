/**
 * The embedded DynamoDB of `npm start` and the tests: dynalite, in memory, on loopback,
 * reached through the real AWS SDK like any other endpoint.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';
import { ensureTable } from './table.js';

export interface LocalDynamoDb {
  client: DynamoDBClient;
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  tableName: string;
  close(): Promise<void>;
}

/**
 * Starts dynalite on 127.0.0.1 (a free port) and creates the dedupe table.
 * Data lives in memory and is gone when the process stops.
 */
export async function startLocalDynamoDb(tableName: string): Promise<LocalDynamoDb> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    // dynalite accepts any credentials; fixed ones keep the embedded store independent of the AWS profile.
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTable(client, tableName);
  return {
    client,
    endpoint,
    tableName,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
