/**
 * What the group's batched read found of one alert ({@link Seen}, `DedupeStore.readMany`): its
 * occurrence's head and the dedupe view of its alert record, both parsed. The claim decides from it
 * without reading again, and two answers need no request at all: whether the alert is most likely new
 * ({@link unseen}, so that enrichment may start early) and its flap run ({@link runOf}).
 *
 * The flap run lives in the alert record (`runCount`, `runSince`, written by the record's write after
 * delivery): the record read with the head holds the previous firing's `startsAt` and its run.
 */
import type { Alert } from '../alertmanager/schema.js';
import * as z from '../core/zod.js';
import { isLive, type HeadItem } from './head-item.js';
import { stringSet } from './stored-item.js';

/**
 * What the dedupe reads of an alert record (`alert-record-items.ts`): its occurrence, the delivery mark, the flap run,
 * the channels it reached.
 */
export const recordViewSchema = z.object({
  pk: z.string(),
  /** The occurrence last notified, RFC 3339 with milliseconds. */
  startsAt: z.optional(z.string()),
  /** The event whose claimed channels all accepted it (`delivery-mark.ts`). */
  deliveredEvent: z.optional(z.string()),
  /** The occurrence's flap run: firings in it; absent in records written before runs were kept there (a run of 1). */
  runCount: z.optional(z.number()),
  /** Its first firing's `startsAt`, epoch milliseconds. */
  runSince: z.optional(z.number()),
  /** Epoch seconds. */
  expiresAt: z.optional(z.number()),
  /** The occurrence's generation (absent: 0), and its acknowledgement's silence end (`silence-end.ts`). */
  generation: z.optional(z.number()),
  ack: z.optional(z.object({ silenceEndsAt: z.optional(z.string()) })),
  /** The channels the alert reached (its routes', and escalation's): a resolve also goes to escalation's. */
  channels: z.optional(stringSet()),
});
export type RecordView = z.infer<typeof recordViewSchema>;

/** What {@link DedupeStore.readMany} read of one alert. */
export interface Seen {
  /** The occurrence's head item; `undefined`: none stored (expired ones are here: the claim judges expiry). */
  readonly head: HeadItem | undefined;
  /** The alert record's dedupe view; `undefined`: none stored, or not read (`recordRead`). */
  readonly record: RecordView | undefined;
  /** False for a storm's new alert whose record was not read (`readMany`'s `newRecordsUpTo`): no flap run from it. */
  readonly recordRead: boolean;
}

/** A run of firings of one alert, each within the flap window of the previous. */
export interface FlapRun {
  /** Firings in the run, including this one (1: not flapping). */
  count: number;
  /** `startsAt` of the run's first firing, epoch milliseconds. */
  sinceMs: number;
}

/**
 * Whether the read found no live occurrence of this firing: a hint that its claim will most likely be a
 * `first notification`, so that work which only reads (enrichment) can start while the claim is written.
 * Never a decision: only the claim says who sends.
 * @param nowMs epoch milliseconds
 */
export function unseen(alert: Pick<Alert, 'status'>, seen: Seen, nowMs: number): boolean {
  return alert.status === 'firing' && !(seen.head && isLive(seen.head, nowMs));
}

/**
 * The run a firing continues, from the record read with its head: the same firing (a repair, a re-fire
 * with the same `startsAt`) keeps the stored run; a firing within `windowMs` of the recorded one
 * continues it; else, or out of order, a new run.
 * @param windowMs the flap window, milliseconds
 * @param nowMs epoch milliseconds (an expired record is absent)
 * @returns `undefined` when the record was not read
 */
export function runOf(
  alert: Pick<Alert, 'startsAt'>,
  seen: Seen,
  windowMs: number,
  nowMs: number,
): FlapRun | undefined {
  if (!seen.recordRead) return undefined;
  const startsAtMs = Date.parse(alert.startsAt);
  const record = seen.record;
  const lastMs = record?.startsAt && (record.expiresAt ?? 0) * 1000 > nowMs ? Date.parse(record.startsAt) : Number.NaN;
  const run = { count: record?.runCount ?? 1, sinceMs: record?.runSince ?? lastMs };
  if (lastMs === startsAtMs) return run;
  if (lastMs < startsAtMs && lastMs >= startsAtMs - windowMs) return { count: run.count + 1, sinceMs: run.sinceMs };
  return { count: 1, sinceMs: startsAtMs };
}
