/**
 * BatchGetItem over any number of keys of the table, strongly consistent unless asked for a hint
 * (`consistent: false`: eventually consistent, half the read units): chunks of 100 keys (the API's
 * limit) read in parallel, `UnprocessedKeys` retried a few rounds. Keys still unprocessed after that are
 * left out of the answer, so a caller can tell "absent" (read, no item) from "not read". A caller that
 * reads only some attributes names them (`ProjectionExpression`): DynamoDB then sends, and the SDK
 * parses, only those (a duplicate's read of its alert record skips the stored enrichment); it does not
 * lower the read units, which DynamoDB charges per 4 KB of each whole item read, found or not.
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** BatchGetItem's per-call key limit. */
export const BATCH_GET_MAX_KEYS = 100;
/** Rounds of `UnprocessedKeys` retried. */
const ROUNDS = 3;

/** An item as the document client returns it, not yet parsed (`stored-item.ts`). */
export type RawItem = Record<string, unknown>;

/**
 * @param keys partition keys (`pk`); duplicates are read once
 * @param options.attributes the attributes to read (`pk` is always read: the answer is keyed by it); default: all
 * @param options.consistent false: an eventually consistent read (it may miss a write of the last second or so)
 * @returns the keys read: the item, or `undefined` for a key with no item
 * @throws the SDK's error (throttling beyond its own retries, an unreachable endpoint)
 */
export async function batchGet(
  doc: DynamoDBDocumentClient,
  table: string,
  keys: string[],
  { attributes, consistent = true }: { attributes?: readonly string[]; consistent?: boolean } = {},
): Promise<Map<string, RawItem | undefined>> {
  const projection = attributes && projectionOf(attributes);
  const unique = [...new Set(keys)];
  const read = new Map<string, RawItem | undefined>();
  const chunks = Array.from({ length: Math.ceil(unique.length / BATCH_GET_MAX_KEYS) }, (_, i) =>
    unique.slice(i * BATCH_GET_MAX_KEYS, (i + 1) * BATCH_GET_MAX_KEYS),
  );
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending = chunk;
      for (let round = 0; round < ROUNDS && pending.length; round++) {
        const out = await doc.send(
          new BatchGetCommand({
            RequestItems: {
              [table]: { Keys: pending.map((pk) => ({ pk })), ConsistentRead: consistent, ...projection },
            },
          }),
        );
        for (const item of out.Responses?.[table] ?? []) read.set(String(item.pk), item);
        const unprocessed = new Set((out.UnprocessedKeys?.[table]?.Keys ?? []).map((k) => String(k.pk)));
        for (const key of pending) if (!unprocessed.has(key) && !read.has(key)) read.set(key, undefined);
        pending = pending.filter((key) => unprocessed.has(key));
      }
    }),
  );
  return read;
}

/** `ProjectionExpression` with every name through a placeholder (`state` is a DynamoDB reserved word). */
function projectionOf(attributes: readonly string[]): {
  ProjectionExpression: string;
  ExpressionAttributeNames: Record<string, string>;
} {
  const names = [...new Set(['pk', ...attributes])];
  return {
    ProjectionExpression: names.map((_, i) => `#a${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#a${i}`, n])),
  };
}
