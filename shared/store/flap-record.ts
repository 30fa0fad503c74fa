/**
 * The flap record of one alert in the dedupe table: item `flap#<fingerprint>` (an over-long one as its digest, `keys.ts`) with `lastStartsAt`
 * (epoch ms of the latest firing seen), `runCount` and `runSince` (the current run of firings, each
 * within the window of the previous), `expiresAt` (epoch seconds, TTL: kept one window plus an hour).
 *
 * Single-item conditional writes only (dynalite and DynamoDB alike): the common case, a firing that
 * starts a new run, is one write; a flapping firing is two; a firing seen before is two writes and a read.
 *
 * Where the pipeline keeps alert records, the run needs no item and no request of its own
 * ({@link runFromRecord}): the record read with the dedupe state holds the previous firing's `startsAt`
 * and its run (`runCount`, `runSince`), and the record's write after delivery stores the new run.
 */
import { GetCommand, UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { keyPart } from './keys.js';
import type { FlapRun } from './dedupe.js';

/** How long a record outlives its window, seconds (DynamoDB deletes late; reads check `expiresAt`). */
const EXTRA_TTL_SECONDS = 3600;

interface FlapItem {
  lastStartsAt: number;
  runCount: number;
  runSince: number;
  expiresAt: number;
}

/**
 * Records a firing and returns its run (see `DedupeStore.noteFiring`).
 * @throws the SDK's error for anything but a failed condition
 */
export async function noteFiring(
  doc: DynamoDBDocumentClient,
  table: string,
  fingerprint: string,
  firing: { startsAtMs: number; windowMs: number; nowMs: number },
): Promise<FlapRun> {
  const { startsAtMs, windowMs, nowMs } = firing;
  const key = { pk: `flap#${keyPart(fingerprint)}` };
  const nowSec = Math.floor(nowMs / 1000);
  const expiresAt = Math.floor(Math.max(nowMs, startsAtMs) / 1000) + Math.ceil(windowMs / 1000) + EXTRA_TTL_SECONDS;
  const values = { ':s': startsAtMs, ':edge': startsAtMs - windowMs, ':exp': expiresAt };
  const started = await conditional(doc, {
    TableName: table,
    Key: key,
    UpdateExpression: 'SET lastStartsAt = :s, runCount = :one, runSince = :s, expiresAt = :exp',
    ConditionExpression: 'attribute_not_exists(pk) OR lastStartsAt < :edge OR expiresAt <= :nowSec',
    ExpressionAttributeValues: { ...values, ':one': 1, ':nowSec': nowSec },
  });
  if (started) return { count: 1, sinceMs: startsAtMs };
  const continued = await conditional(doc, {
    TableName: table,
    Key: key,
    UpdateExpression: 'SET lastStartsAt = :s, runCount = runCount + :one, expiresAt = :exp',
    ConditionExpression: 'lastStartsAt >= :edge AND lastStartsAt < :s',
    ExpressionAttributeValues: { ...values, ':one': 1 },
    ReturnValues: 'ALL_NEW',
  });
  if (continued) return { count: continued.runCount, sinceMs: continued.runSince };
  // This firing was recorded before (a repair, a retry) or a later one was: report the stored run
  // for the former, nothing for a firing that arrives out of order.
  const out = await doc.send(new GetCommand({ TableName: table, Key: key, ConsistentRead: true }));
  const item = out.Item as FlapItem | undefined;
  return item && item.lastStartsAt === startsAtMs ? { count: item.runCount, sinceMs: item.runSince } : { count: 1, sinceMs: startsAtMs };
}

/** Runs a conditional update; `undefined` when its condition failed, else the item (`ReturnValues`) or `{}`. */
async function conditional(doc: DynamoDBDocumentClient, input: ConstructorParameters<typeof UpdateCommand>[0]): Promise<FlapItem | undefined> {
  try {
    const out = await doc.send(new UpdateCommand(input));
    return (out.Attributes as FlapItem | undefined) ?? ({} as FlapItem);
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') return undefined;
    throw err;
  }
}

/** What {@link runFromRecord} reads of an alert record (`alert-record-items.ts`). */
export interface RecordRun {
  /** The occurrence last notified, RFC 3339. */
  startsAt?: string;
  /** Its run; absent in records written before runs were kept there (read as a run of 1). */
  runCount?: number;
  /** Epoch milliseconds. */
  runSince?: number;
  /** Epoch seconds. */
  expiresAt?: number;
}

/**
 * The run of a firing from the alert's record as read before this firing was recorded: the same
 * firing (a repair, a re-fire with the same `startsAt`) keeps the stored run; a firing within
 * `windowMs` of the recorded one continues it; else, or out of order, a new run.
 * @param startsAtMs the firing's `startsAt`, epoch milliseconds
 */
export function runFromRecord(record: RecordRun | undefined, startsAtMs: number, windowMs: number, nowMs: number): FlapRun {
  const lastMs = record?.startsAt && (record.expiresAt ?? 0) * 1000 > nowMs ? Date.parse(record.startsAt) : Number.NaN;
  const run = { count: record?.runCount ?? 1, sinceMs: record?.runSince ?? lastMs };
  if (lastMs === startsAtMs) return run;
  if (lastMs < startsAtMs && lastMs >= startsAtMs - windowMs) return { count: run.count + 1, sinceMs: run.sinceMs };
  return { count: 1, sinceMs: startsAtMs };
}
