/**
 * The embedded DynamoDB of `npm start` and the tests: dynalite, in memory, listening on loopback,
 * reached over HTTP through the real AWS SDK (signed requests, the SDK's retries) like any other
 * endpoint: the store adapters send it exactly what they send DynamoDB from Lambda.
 *
 * DynamoDB's TTL deletes expired items in the background; dynalite never does, so a long-running
 * `npm start` would keep every record until it stops. {@link sweepExpired} plays DynamoDB's part,
 * on a timer ({@link SWEEP_EVERY_MS}); reads already treat an expired item as absent either way.
 *
 * Closing waits for the requests dynalite is answering ({@link drainOnClose}): dynalite closes its
 * database as soon as its HTTP server closes, and a request still queued behind an item lock then
 * meets a closed database, an error dynalite throws out of its handler (it has no status code), which
 * ends the process. Requests arriving while the store closes are answered 503, a transient error the
 * SDK and the pipeline already treat as such.
 */
import { DeleteItemCommand, DynamoDBClient, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ifConditionHolds } from './conditional.js';
import { ensureTable, PARTITION_KEY, TTL_ATTRIBUTE } from './table.js';

export interface LocalDynamoDb {
  client: DynamoDBClient;
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  tableName: string;
  close(): Promise<void>;
}

/** How often the embedded store deletes expired items, milliseconds (DynamoDB's TTL takes up to days; this is sooner). */
const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Starts dynalite on 127.0.0.1 (a free port) and creates the dedupe table if missing.
 * Data lives in memory and is gone when the process stops, or with `path` in that LevelDB folder
 * (`DATA_DIR`, whose lock `shared/runtime/data-dir.ts` holds); expired items are swept every {@link SWEEP_EVERY_MS}.
 * @param options.path dynalite's LevelDB folder; unset: in memory
 */
export async function startLocalDynamoDb(tableName: string, options: { path?: string } = {}): Promise<LocalDynamoDb> {
  unpooledBuffers();
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0, path: options.path });
  const drain = drainOnClose(server);
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
      await drain();
      client.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** How long closing waits for the requests in flight, milliseconds (a store request takes well under one). */
const DRAIN_MS = 5_000;

/**
 * Puts a gate before dynalite's request handler: it counts the requests being answered and, once
 * closing, answers new ones `503` with `Connection: close`.
 * @returns a function that starts closing and resolves when no request is in flight (or after {@link DRAIN_MS})
 */
function drainOnClose(server: Server): () => Promise<void> {
  const [handler] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (!handler) throw new Error('dynalite has no request handler to put the close gate before');
  let inFlight = 0;
  let closing = false;
  let idle: (() => void) | undefined;
  server.removeListener('request', handler);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (closing) {
      res.writeHead(503, { connection: 'close', 'content-type': 'application/x-amz-json-1.0' });
      res.end(JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ServiceUnavailable', message: 'closing' }));
      return;
    }
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (inFlight === 0) idle?.();
    });
    handler.call(server, req, res);
  });
  return () => {
    closing = true;
    if (inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DRAIN_MS).unref();
      idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  };
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

async function deleteIfExpired(
  client: DynamoDBClient,
  tableName: string,
  key: Record<string, AttributeValue>,
  now: AttributeValue,
): Promise<number> {
  const deleted = await ifConditionHolds(
    client.send(
      new DeleteItemCommand({
        TableName: tableName,
        Key: key,
        ConditionExpression: '#exp <= :now',
        ExpressionAttributeNames: { '#exp': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': now },
      }),
    ),
  );
  return deleted ? 1 : 0;
}
