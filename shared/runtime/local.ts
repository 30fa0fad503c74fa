/**
 * Where `npm start` keeps its dedupe ledger:
 * - `AWS_ENDPOINT_URL_DYNAMODB` set: that endpoint (DynamoDB Local, LocalStack…), table created if missing;
 * - else `TABLE_NAME` set: that table in real DynamoDB (standard AWS SDK configuration);
 * - else `DATA_DIR` set: an embedded dynalite keeping its data in that folder (`data-dir.ts`);
 * - else an embedded in-memory dynalite, gone when the process stops.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Config } from './config.js';
import { DEFAULT_TABLE_NAME, ensureTable } from '../store/table.js';
import { AWS_CLIENT_DEFAULTS } from './aws-clients.js';
import { StartupError } from './startup-error.js';

export { StartupError };

export interface DedupeTable {
  client: DynamoDBClient;
  /** For the start-up log line. */
  description: string;
  /** Where the state lives and whether it survives a restart, for the start-up log line. */
  state: string;
  close(): Promise<void>;
}

/** The short code of a failed call (`ECONNREFUSED`, `ResourceInUseException`, …), never its message, which may name a URL. */
function errorCode(err: unknown): string {
  const e = err as
    | { code?: unknown; name?: unknown; cause?: { code?: unknown }; errors?: { code?: unknown }[] }
    | undefined;
  for (const code of [e?.code, e?.cause?.code, e?.errors?.[0]?.code, e?.name])
    if (typeof code === 'string' && code && code !== 'Error' && code !== 'AggregateError') return code;
  return 'unknown error';
}

/**
 * Opens (and where local, creates) the dedupe table for `npm start`.
 * @throws StartupError naming `AWS_ENDPOINT_URL_DYNAMODB` when that endpoint cannot be reached or refuses the table
 */
export async function openDedupeTable(config: Config, env: Record<string, string | undefined>): Promise<DedupeTable> {
  const tableName = config.tableName ?? DEFAULT_TABLE_NAME;
  if (env.AWS_ENDPOINT_URL_DYNAMODB) {
    const client = endpointClient();
    try {
      await ensureTable(client, tableName);
    } catch (err) {
      client.destroy();
      throw new StartupError(
        `AWS_ENDPOINT_URL_DYNAMODB: cannot create or open table ${tableName} there (${errorCode(err)}); is DynamoDB Local running at that address?`,
      );
    }
    const description = `table ${tableName} at AWS_ENDPOINT_URL_DYNAMODB`;
    return { client, description, state: description, close: async () => client.destroy() };
  }
  if (config.tableName) {
    const client = new DynamoDBClient(AWS_CLIENT_DEFAULTS);
    const description = `DynamoDB table ${tableName}`;
    return { client, description, state: description, close: async () => client.destroy() };
  }
  return config.dataDir ? openEmbeddedOnDisk(config.dataDir, tableName) : openEmbeddedInMemory(tableName);
}

/**
 * Credentials and region for a DynamoDB-compatible endpoint when the environment has none: DynamoDB Local,
 * LocalStack and dynalite accept any. Real ones (keys, a profile, a role) are used when there are.
 */
const ENDPOINT_FALLBACK = { region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

/** The client of `AWS_ENDPOINT_URL_DYNAMODB` (the SDK reads that variable itself): the SDK's chains, then the fallback. */
function endpointClient(): DynamoDBClient {
  const sdk = new DynamoDBClient(AWS_CLIENT_DEFAULTS);
  const { region, credentials } = sdk.config;
  sdk.destroy();
  return new DynamoDBClient({
    ...AWS_CLIENT_DEFAULTS,
    region: () => region().catch(() => ENDPOINT_FALLBACK.region),
    credentials: (options) => credentials(options).catch(() => ENDPOINT_FALLBACK.credentials),
  });
}

async function openEmbeddedInMemory(tableName: string): Promise<DedupeTable> {
  // Loaded only here: a process on a real table never loads dynalite and its store.
  const { startLocalDynamoDb } = await import('../store/local-dynamodb.js');
  const local = await startLocalDynamoDb(tableName);
  return {
    client: local.client,
    description: `embedded dynalite (in memory) at ${local.endpoint}`,
    state: 'in memory — lost on restart; set DATA_DIR',
    close: local.close,
  };
}

/** The embedded store in `DATA_DIR`, this process its only user (the folder's lock). */
async function openEmbeddedOnDisk(dir: string, tableName: string): Promise<DedupeTable> {
  const [{ openDataDir }, { startLocalDynamoDb }] = await Promise.all([
    import('./data-dir.js'),
    import('../store/local-dynamodb.js'),
  ]);
  const folder = await openDataDir(dir);
  const local = await startLocalDynamoDb(tableName, { path: folder.storePath }).catch(async (err: unknown) => {
    await folder.release();
    throw err;
  });
  return {
    client: local.client,
    description: `embedded dynalite (on disk in ${folder.storePath}) at ${local.endpoint}`,
    state: `on disk in ${dir} (DATA_DIR)`,
    close: async () => {
      await local.close();
      await folder.release();
    },
  };
}
