/**
 * The stored head of an alert occurrence (see `occurrence.ts`): one item per `fingerprint` and
 * `startsAt`, under the key of the occurrence's first firing event, `event#<fingerprint>#<startsAt>#firing`.
 * Deployed tables already hold that item for every alert notified, and every resend reads it: so the
 * state costs no extra item and no extra read.
 *
 * Attributes: `state` (`firing` | `resolved`, the state last claimed), `generation` (re-fires so
 * far), `pending` and `delivered` (string sets: that state's ledger; `pending` is absent once every
 * channel has it, DynamoDB sets cannot be empty), `leaseUntil` and `claimedAt` (epoch ms),
 * `resolvedEndsAtMs` (the announced resolve's `endsAt`, epoch ms), `expiresAt` (epoch seconds, TTL).
 *
 * Items written before generations existed have no `state`; their resolve, if any, is a separate
 * item `event#…#resolved`. They are read as generation 0 (`legacyHead`) and migrated on first use.
 * Keys: `keys.ts`.
 */
import { hasEnded, type Alert } from '../alertmanager/schema.js';
import * as z from '../core/zod.js';
import type { Head, Incoming } from './occurrence.js';
import { stringSet } from './stored-item.js';

/** The stored shape (through the document client); every attribute but the key optional in a projected read's parse. */
export const headItemSchema = z.object({
  pk: z.string(),
  state: z.optional(z.enum(['firing', 'resolved'])),
  generation: z.optional(z.number()),
  pending: z.optional(stringSet()),
  delivered: z.optional(stringSet()),
  leaseUntil: z.number(),
  claimedAt: z.optional(z.number()),
  resolvedEndsAtMs: z.optional(z.number()),
  /** Epoch seconds. */
  expiresAt: z.number(),
});
export type HeadItem = z.infer<typeof headItemSchema>;

/** Attribute names go through placeholders (`state` is a DynamoDB reserved word). */
export const NAMES = {
  '#st': 'state',
  '#gen': 'generation',
  '#p': 'pending',
  '#d': 'delivered',
  '#l': 'leaseUntil',
  '#c': 'claimedAt',
  '#e': 'resolvedEndsAtMs',
  '#x': 'expiresAt',
} as const;

/** The post as the state machine sees it. */
export function incoming(alert: Pick<Alert, 'status' | 'endsAt'>): Incoming {
  const endsAtMs = hasEnded(alert) ? Date.parse(alert.endsAt) : Number.NaN;
  return { status: alert.status, ...(Number.isFinite(endsAtMs) && { endsAtMs }) };
}

/** The head an item holds; `undefined` when absent, expired or legacy. */
export function toHead(item: HeadItem | undefined, nowMs: number): Head | undefined {
  if (!item?.state || !isLive(item, nowMs)) return undefined;
  return {
    state: item.state,
    generation: item.generation ?? 0,
    pending: item.pending ? [...item.pending] : [],
    leaseUntil: item.leaseUntil,
    ...(item.resolvedEndsAtMs !== undefined && { resolvedEndsAtMs: item.resolvedEndsAtMs }),
  };
}

/**
 * A legacy occurrence as a head: resolved when its separate resolve item is live (that item's
 * ledger), else firing (the first event item's own ledger). `undefined` when neither is live.
 */
export function legacyHead(
  first: HeadItem | undefined,
  resolved: HeadItem | undefined,
  nowMs: number,
): (Head & { delivered: string[]; expiresAt: number }) | undefined {
  const from = resolved && isLive(resolved, nowMs) ? resolved : first && isLive(first, nowMs) ? first : undefined;
  if (!from) return undefined;
  return {
    state: from === resolved ? 'resolved' : 'firing',
    generation: 0,
    pending: from.pending ? [...from.pending] : [],
    delivered: from.delivered ? [...from.delivered] : [],
    leaseUntil: from.leaseUntil,
    expiresAt: from.expiresAt,
  };
}

/** DynamoDB deletes expired items late and dynalite never does: reads check `expiresAt`. */
export function isLive(item: Pick<HeadItem, 'expiresAt'>, nowMs: number): boolean {
  return item.expiresAt * 1000 > nowMs;
}

/** `SET #p = :p` for a non-empty set, else `REMOVE #p` (DynamoDB sets cannot be empty). */
export function setOrRemove(
  name: keyof typeof NAMES,
  placeholder: string,
  values: string[] | number | undefined,
): { set?: string; remove?: string; value?: unknown } {
  if (values === undefined || (Array.isArray(values) && values.length === 0)) return { remove: name };
  return { set: `${name} = ${placeholder}`, value: Array.isArray(values) ? new Set(values) : values };
}
