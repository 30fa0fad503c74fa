/**
 * The embedded DynamoDB of `npm start` and the tests: dynalite, in memory, on loopback,
 * reached through the real AWS SDK like any other endpoint.
 *
 * DynamoDB's TTL deletes expired items in the background; dynalite never does, so a long-running
 * `npm start` would keep every record until it stops. {@link sweepExpired} plays DynamoDB's part,
 * on a timer ({@link SWEEP_EVERY_MS}); reads already treat an expired item as absent either way.
 */
import { ConditionalCheckFailedException, DeleteItemCommand, DynamoDBClient, ScanCommand, type AttributeValue, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';
import { withTransactions } from './dynalite-transactions.js';
import { inProcessHandler } from './in-process-handler.js';
import { ensureTable, PARTITION_KEY, TTL_ATTRIBUTE } from './table.js';

export interface LocalDynamoDb {
  client: DynamoDBClient;
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  tableName: string;
  close(): Promise<void>;
}

type RequestSigner = Extract<NonNullable<DynamoDBClientConfig['signer']>, { sign: unknown }>;

/** How often the embedded store deletes expired items, milliseconds (DynamoDB's TTL takes up to days; this is sooner). */
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Starts dynalite on 127.0.0.1 (a free port) and creates the dedupe table.
 * Data lives in memory and is gone when the process stops; expired items are swept every {@link SWEEP_EVERY_MS}.
 */
export async function startLocalDynamoDb(tableName: string): Promise<LocalDynamoDb> {
  unpooledBuffers();
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  // DynamoDB's TransactWriteItems, which dynalite lacks: the record writes of a shared table use it.
  withTransactions(server);
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
    // No socket: the SDK's requests go straight to dynalite's listener (the endpoint stays for other clients).
    requestHandler: inProcessHandler(server),
    signer: unsignedSigner,
  });
  withoutRemoteOnlyHeaders(client);
  await ensureTable(client, tableName);
  let sweeping: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    // One sweep at a time; a failed one (the store closing) waits for the next tick.
    sweeping = sweeping.then(() => sweepExpired(client, tableName, Date.now()).catch(() => 0));
  }, SWEEP_EVERY_MS).unref();
  return {
    client,
    endpoint,
    tableName,
    close: async () => {
      clearInterval(timer);
      await sweeping;
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The embedded client's "signer": SigV4's headers in their shape, with no signature computed. dynalite
 * never verifies a signature; it checks only that `Authorization` names SigV4's `Credential`,
 * `Signature` and `SignedHeaders` and that `X-Amz-Date` is there. Signing each request (the canonical
 * request, the payload's SHA-256, the HMAC chain) bought nothing in this process: measured on a
 * BatchGetItem of 20 keys in process, with the two headers below, ~0.1–0.3 ms of CPU per request of
 * ~1.1–1.5 (issue #10; medians of 8 × 1,000, interleaved). Only this client: one for a real table
 * (`runtime/aws-clients.ts`) signs as ever.
 * @see https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 */
const unsignedSigner: RequestSigner = {
  sign: async (request, options) => {
    const date = new Date(options?.signingDate ?? Date.now()).toISOString().replace(/[-:]|\.\d{3}/g, '');
    request.headers['x-amz-date'] = date;
    request.headers.authorization = `AWS4-HMAC-SHA256 Credential=local/${date.slice(0, 8)}/local/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=unsigned`;
    return request;
  },
};

/**
 * Removes the two headers the SDK adds for AWS's side of a network call, which a store in this
 * process never reads: `User-Agent` (the SDK's version and features for AWS's metrics; its
 * middleware escapes every part on every request) and the recursion-detection header (Lambda's
 * X-Ray trace id, for AWS's loop detection). Both middleware are the SDK's public, named steps.
 * @see https://github.com/aws/aws-sdk-js-v3/blob/main/supplemental-docs/MIDDLEWARE.md
 */
function withoutRemoteOnlyHeaders(client: DynamoDBClient): void {
  client.middlewareStack.remove('getUserAgentMiddleware');
  client.middlewareStack.remove('recursionDetectionMiddleware');
}

/**
 * Turns off Node's Buffer pool in this process, which hosts the store. dynalite's `memory-level` keeps
 * each key and item as a Buffer made from its JSON; one under 4 KB (most items) is a slice of a shared
 * 8 KB pool slab, and a slice kept for good keeps its whole slab alive, the rest of it long since
 * garbage. Measured on `npm start` after 1,000 groups (3,000 alerts): Buffers held 25 MB for ~10 MB of
 * data; unpooled, 10 MB. `Buffer.poolSize` is Node's public setting for this; every Buffer the process
 * makes then has its own memory (a small allocation each, no measurable CPU next to a store request).
 * @see https://nodejs.org/api/buffer.html#class-property-bufferpoolsize
 */
function unpooledBuffers(): void {
  Buffer.poolSize = 0;
}

/**
 * Deletes the items whose TTL attribute (`expiresAt`, epoch seconds) has passed, as DynamoDB's TTL
 * does: each delete is conditional on the item being still expired, so an item written again
 * between the scan and its delete stays.
 * @param nowMs the current time, epoch milliseconds
 * @returns how many items were deleted
 * @throws the SDK's error for a failed scan or delete (other than a lost condition)
 */
export async function sweepExpired(client: DynamoDBClient, tableName: string, nowMs: number): Promise<number> {
  const now: AttributeValue = { N: String(Math.floor(nowMs / 1000)) };
  let deleted = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        ProjectionExpression: '#pk',
        FilterExpression: '#exp <= :now',
        ExpressionAttributeNames: { '#pk': PARTITION_KEY, '#exp': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': now },
        ExclusiveStartKey: start,
      }),
    );
    for (const key of page.Items ?? []) deleted += await deleteIfExpired(client, tableName, key, now);
    start = page.LastEvaluatedKey;
  } while (start);
  return deleted;
}

async function deleteIfExpired(client: DynamoDBClient, tableName: string, key: Record<string, AttributeValue>, now: AttributeValue): Promise<number> {
  try {
    await client.send(
      new DeleteItemCommand({
        TableName: tableName,
        Key: key,
        ConditionExpression: '#exp <= :now',
        ExpressionAttributeNames: { '#exp': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return 1;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return 0;
    throw err;
  }
}
