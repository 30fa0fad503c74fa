/**
 * Strongly consistent BatchGetItem over any number of keys of the dedupe table: chunks of 100 keys
 * (the API's limit) read in parallel, `UnprocessedKeys` retried a few rounds. Keys still unprocessed
 * after that are left out of the answer, so a caller can tell "absent" (read, no item) from "not read".
 * A caller that reads only some attributes names them (`ProjectionExpression`): DynamoDB then sends,
 * and the SDK parses, only those (a duplicate's read of its alert record skips the stored enrichment).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_BatchGetItem.html
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** BatchGetItem's per-call key limit. */
export const BATCH_GET_MAX_KEYS = 100;
/** Rounds of `UnprocessedKeys` retried. */
const ROUNDS = 3;

/**
 * @param keys partition keys (`pk`); duplicates are read once
 * @param attributes the attributes to read (`pk` is always read: the answer is keyed by it); default: all
 * @returns the keys read: the item, or `undefined` for a key with no item
 * @throws the SDK's error (throttling beyond its own retries, an unreachable endpoint)
 */
export async function batchGet<T>(doc: DynamoDBDocumentClient, table: string, keys: string[], attributes?: readonly string[]): Promise<Map<string, T | undefined>> {
  const projection = attributes && projectionOf(attributes);
  const unique = [...new Set(keys)];
  const read = new Map<string, T | undefined>();
  const chunks = Array.from({ length: Math.ceil(unique.length / BATCH_GET_MAX_KEYS) }, (_, i) => unique.slice(i * BATCH_GET_MAX_KEYS, (i + 1) * BATCH_GET_MAX_KEYS));
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: Record<string, unknown>[] = chunk.map((pk) => ({ pk }));
      for (let round = 0; round < ROUNDS && pending.length; round++) {
        const out = await doc.send(new BatchGetCommand({ RequestItems: { [table]: { Keys: pending, ConsistentRead: true, ...projection } } }));
        for (const item of out.Responses?.[table] ?? []) read.set(item.pk as string, item as T);
        const unprocessed = new Set((out.UnprocessedKeys?.[table]?.Keys ?? []).map((k) => k.pk as string));
        for (const key of pending) if (!unprocessed.has(key.pk as string) && !read.has(key.pk as string)) read.set(key.pk as string, undefined);
        pending = pending.filter((k) => unprocessed.has(k.pk as string));
      }
    }),
  );
  return read;
}

/** `ProjectionExpression` with every name through a placeholder (`state` is a DynamoDB reserved word). */
function projectionOf(attributes: readonly string[]): { ProjectionExpression: string; ExpressionAttributeNames: Record<string, string> } {
  const names = [...new Set(['pk', ...attributes])];
  return { ProjectionExpression: names.map((_, i) => `#a${i}`).join(', '), ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#a${i}`, n])) };
}
