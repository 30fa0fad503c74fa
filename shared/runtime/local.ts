/**
 * Where `npm start` keeps its dedupe ledger:
 * - `AWS_ENDPOINT_URL_DYNAMODB` set: that endpoint (DynamoDB Local, LocalStack…), table created if missing;
 * - else `TABLE_NAME` set: that table in real DynamoDB (standard AWS SDK configuration);
 * - else an embedded in-memory dynalite, gone when the process stops.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Config } from './config.js';
import { DEFAULT_TABLE_NAME, ensureTable } from '../store/table.js';
import { AWS_CLIENT_DEFAULTS } from './aws-clients.js';

export interface DedupeTable {
  client: DynamoDBClient;
  /** For the start-up log line. */
  description: string;
  /** This process is the table's only writer (the embedded store): the dedupe store may batch claims (`shared/store/start-many.ts`). */
  exclusive?: true;
  close(): Promise<void>;
}

/** A start-up failure whose message names the setting to fix; `npm start` prints it and exits 1. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/** The short code of a failed call (`ECONNREFUSED`, `ResourceInUseException`, …), never its message, which may name a URL. */
function errorCode(err: unknown): string {
  const e = err as { code?: unknown; name?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] } | undefined;
  for (const code of [e?.code, e?.cause?.code, e?.errors?.[0]?.code, e?.name]) if (typeof code === 'string' && code && code !== 'Error' && code !== 'AggregateError') return code;
  return 'unknown error';
}

/**
 * Opens (and where local, creates) the dedupe table for `npm start`.
 * @throws StartupError naming `AWS_ENDPOINT_URL_DYNAMODB` when that endpoint cannot be reached or refuses the table
 */
export async function openDedupeTable(config: Config, env: Record<string, string | undefined>): Promise<DedupeTable> {
  const tableName = config.tableName ?? DEFAULT_TABLE_NAME;
  if (env.AWS_ENDPOINT_URL_DYNAMODB) {
    // The SDK reads AWS_ENDPOINT_URL_DYNAMODB itself.
    const client = new DynamoDBClient(AWS_CLIENT_DEFAULTS);
    try {
      await ensureTable(client, tableName);
    } catch (err) {
      client.destroy();
      throw new StartupError(`AWS_ENDPOINT_URL_DYNAMODB: cannot create or open table ${tableName} there (${errorCode(err)}); is DynamoDB Local running at that address?`);
    }
    return { client, description: `table ${tableName} at AWS_ENDPOINT_URL_DYNAMODB`, close: async () => client.destroy() };
  }
  if (config.tableName) {
    const client = new DynamoDBClient(AWS_CLIENT_DEFAULTS);
    return { client, description: `DynamoDB table ${tableName}`, close: async () => client.destroy() };
  }
  // Loaded only here: a process on a real table never loads dynalite and its in-memory store.
  const { startLocalDynamoDb } = await import('../store/local-dynamodb.js');
  const local = await startLocalDynamoDb(tableName);
  return { client: local.client, description: `embedded dynalite (in memory) at ${local.endpoint}`, exclusive: true, close: local.close };
}
