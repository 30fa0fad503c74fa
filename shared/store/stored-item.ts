/**
 * Items as read from the table are parsed, never cast: each item kind has a zod schema (its layout, in
 * the module that owns the kind), and an item that does not match it is a {@link StoredItemError} naming
 * its key, not a value whose fields are silently `undefined`. Schemas accept every shape that the code
 * of every released version wrote (older items lack newer attributes: those are optional) and strip
 * attributes they do not name.
 */
import * as z from '../core/zod.js';

/** A stored item that does not match its kind's layout (written by hand, or by something else). */
export class StoredItemError extends Error {
  /** @param key the item's partition key */
  constructor(
    readonly key: string,
    detail: string,
  ) {
    super(`stored item ${key} does not match its layout: ${detail}`);
    this.name = 'StoredItemError';
  }
}

/**
 * The item, parsed.
 * @param item what `GetItem`, `BatchGetItem` or a write's `ReturnValues` gave (through the document client)
 * @throws StoredItemError naming the item's key and the first mismatch
 */
export function parseItem<T>(schema: z.ZodMiniType<T>, item: unknown): T {
  const parsed = schema.safeParse(item);
  if (parsed.success) return parsed.data;
  const key = typeof (item as { pk?: unknown } | undefined)?.pk === 'string' ? (item as { pk: string }).pk : '?';
  const issue = parsed.error.issues[0];
  throw new StoredItemError(key, issue ? `${issue.path.join('.') || 'item'}: ${issue.message}` : 'invalid');
}

/** The item, parsed, or `undefined` when there is none. @throws StoredItemError */
export function parseOptional<T>(schema: z.ZodMiniType<T>, item: unknown): T | undefined {
  return item === undefined ? undefined : parseItem(schema, item);
}

/** A DynamoDB string set through the document client (a JavaScript `Set`). */
export const stringSet = () => z.set(z.string());
