/**
 * Acknowledgements of alert sets as jobs: the decision ("alice acknowledged set X at T") is recorded by
 * one conditional write, then the set is worked through in steps, each advancing a cursor by a
 * conditional write, so a repeated or concurrent step (a second click, Lambda's retry of an
 * asynchronous invocation) changes nothing twice.
 *
 * Item: `ackjob#<set id>` in the dedupe table: the link's claims it needs again (group, channel, what the
 * link covers), the decision (`by`, `at`, silence hours), the set's size, two cursors (alerts
 * acknowledged; alerts whose PagerDuty events were sent), when the next paced event may go, the paced
 * events' keys that several alerts share (a storm's one `acknowledge`, sent once by whichever step got to it
 * first; a string set `pacedKeys`), and `expiresAt` (TTL, epoch seconds).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../core/zod.js';
import { ifConditionHolds } from './conditional.js';
import { parseOptional, stringSet } from './stored-item.js';
import { recordText } from './alert-record-items.js';

/** What a job remembers of the signed link that started it. */
export interface SetJobLink {
  group: string;
  channel: string;
  /** Epoch seconds. */
  issuedAt: number;
  /** Epoch milliseconds, sender's clock. */
  startsAt?: number;
  /** The fingerprints the link itself carries (at most 50): what is acknowledged when the set is gone. */
  named: string[];
}

/** An alert set's acknowledgement, as decided and as far as it got. */
export interface AckSetJob {
  /** The alert set's id (`set#<id>`). */
  id: string;
  link: SetJobLink;
  /** Who acknowledged (the typed or Slack name). */
  by: string;
  /** When it was decided, RFC 3339 with milliseconds: every alert's acknowledgement carries this time. */
  at: string;
  silenceHours?: number;
  /** Alerts in the set. */
  total: number;
  /** Alerts of the set (in its order) acknowledged so far. */
  acked: number;
  /** Alerts of the set whose paced events (PagerDuty's `acknowledge`) were sent. */
  paced: number;
  /** Epoch milliseconds before which no further paced event may be sent. */
  pacedNotBeforeMs: number;
  /**
   * Paced events sent under a key several alerts share (`<channel> <dedup_key>`: a storm's), so that a later
   * step does not send them again. Per-alert keys are not kept: each alert is in one step.
   */
  pacedKeys?: string[];
  /** Last step, epoch milliseconds: a job not moved for long can be resumed. */
  updatedAtMs: number;
}

/** Port; one adapter: {@link DynamoDbAckSetJobStore}. Times are epoch milliseconds. */
export interface AckSetJobStore {
  /**
   * Records the decision, once per set (one conditional `PutItem`).
   * @returns `undefined` when recorded; the job recorded first when there was one already
   * @throws the store's error
   */
  start(job: AckSetJob, expiresAtMs: number): Promise<AckSetJob | undefined>;
  /** @throws the store's error */
  get(id: string): Promise<AckSetJob | undefined>;
  /**
   * Moves a cursor from `from` to `to` (and the pacing time; adds `sentKeys` to `pacedKeys`), only if it still
   * is at `from`.
   * @returns false when another step moved it first
   * @throws the store's error
   */
  advance(id: string, cursor: 'acked' | 'paced', move: PacedMove, nowMs: number): Promise<boolean>;
}

/** A cursor's move (see {@link AckSetJobStore.advance}). */
export interface PacedMove {
  from: number;
  to: number;
  /** Epoch milliseconds. */
  pacedNotBeforeMs?: number;
  /** Keys to add to {@link AckSetJob.pacedKeys}. */
  sentKeys?: readonly string[];
}

const jobKey = (id: string) => `ackjob#${id}`;

const jobSchema = z.object({
  job: z.string(),
  acked: z.number(),
  paced: z.number(),
  pacedNotBeforeMs: z.number(),
  updatedAtMs: z.number(),
  pacedKeys: z.optional(stringSet()),
});
const fixedSchema = z.object({
  id: z.string(),
  link: z.object({
    group: z.string(),
    channel: z.string(),
    issuedAt: z.number(),
    startsAt: z.optional(z.number()),
    named: z.array(z.string()),
  }),
  by: z.string(),
  at: z.string(),
  silenceHours: z.optional(z.number()),
  total: z.number(),
});

export class DynamoDbAckSetJobStore implements AckSetJobStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, options: { tableName: string }) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = options.tableName;
  }

  async start(job: AckSetJob, expiresAtMs: number): Promise<AckSetJob | undefined> {
    const { acked, paced, pacedNotBeforeMs, updatedAtMs, ...fixed } = job;
    const fixedText = JSON.stringify({ ...fixed, link: { ...fixed.link, group: recordText(fixed.link.group) } });
    const item = {
      pk: jobKey(job.id),
      job: fixedText,
      acked,
      paced,
      pacedNotBeforeMs,
      updatedAtMs,
      expiresAt: Math.ceil(expiresAtMs / 1000),
    };
    const put = new PutCommand({
      TableName: this.#table,
      Item: item,
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    if (await ifConditionHolds(this.#doc.send(put))) return undefined;
    const first = await this.get(job.id);
    if (!first) throw new Error(`alert set acknowledgement ${job.id}: recorded but not readable`);
    return first;
  }

  async get(id: string): Promise<AckSetJob | undefined> {
    const out = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: jobKey(id) }, ConsistentRead: true }),
    );
    const item = parseOptional(jobSchema, out.Item);
    if (!item) return undefined;
    const fixed = parseOptional(fixedSchema, JSON.parse(item.job));
    if (!fixed) return undefined;
    const { job: _job, pacedKeys, ...cursors } = item;
    return { ...fixed, ...cursors, ...(pacedKeys?.size && { pacedKeys: [...pacedKeys] }) };
  }

  async advance(id: string, cursor: 'acked' | 'paced', move: PacedMove, nowMs: number): Promise<boolean> {
    const pacing = move.pacedNotBeforeMs === undefined ? '' : ', pacedNotBeforeMs = :nb';
    const keys = move.sentKeys?.length ? ' ADD pacedKeys :k' : '';
    const update = new UpdateCommand({
      TableName: this.#table,
      Key: { pk: jobKey(id) },
      UpdateExpression: `SET #c = :to, updatedAtMs = :now${pacing}${keys}`,
      ConditionExpression: '#c = :from',
      ExpressionAttributeNames: { '#c': cursor },
      ExpressionAttributeValues: {
        ':to': move.to,
        ':from': move.from,
        ':now': nowMs,
        ...(move.pacedNotBeforeMs !== undefined && { ':nb': move.pacedNotBeforeMs }),
        ...(keys && { ':k': new Set(move.sentKeys) }),
      },
    });
    return (await ifConditionHolds(this.#doc.send(update))) !== undefined;
  }
}
