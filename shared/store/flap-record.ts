/**
 * The flap record of one alert in the dedupe table: item `flap#<fingerprint>` (an over-long one as its digest, `keys.ts`) with `lastStartsAt`
 * (epoch ms of the latest firing seen), `runCount` and `runSince` (the current run of firings, each
 * within the window of the previous), `expiresAt` (epoch seconds, TTL: kept one window plus an hour).
 *
 * Single-item conditional writes only (dynalite and DynamoDB alike): the common case, a firing that
 * starts a new run, is one write; a flapping firing is two; a firing seen before is two writes and a read.
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
