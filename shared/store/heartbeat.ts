/**
 * Heartbeat state in the dedupe table, a few items the check reads instead of scanning the table:
 * - `heartbeat-watchdog#<fingerprint>`, one per heartbeat alert (Alertmanager's `fingerprint` of the
 *   Watchdog's labels, the same from every peer of an HA cluster): `lastSeen` (epoch ms of its latest
 *   delivery by any peer), `firstSeen` and `deliveries` (a heartbeat delivered once is not yet a
 *   cluster's: see `WatchdogRecord.established`), `peers` (string set of the `externalURL`s that
 *   delivered it: the cluster), and while `AlertingPipelineHeartbeatMissing` is raised for it
 *   `missingSince` (epoch ms, its `startsAt`) and `raisedLabels` (the labels raised, so the resolve
 *   carries the same ones);
 * - `heartbeat#<externalURL>`, one per Alertmanager peer: `lastSeen` (its own latest delivery; only
 *   for the per-peer gauge: a passive HA peer rightly stops delivering);
 * - `heartbeats`: `alertmanagers` and `watchdogs`, string sets of every peer and fingerprint seen,
 *   at most `maxEntries` each (a new one beyond is refused, atomically), and `armedSince` (epoch ms
 *   of the first check, so "never received for a full timeout" survives a Lambda cold start; with
 *   `npm start`'s in-memory store it is the process's first check).
 * Fingerprints and `externalURL`s are alert text (anyone who can post to Alertmanager's API sets a
 * Watchdog's labels): in keys they are bounded like alert keys (`keyPart`: over 256 bytes, their
 * digest), so no value can make a key DynamoDB refuses. None expires: a cluster that was seen and
 * falls silent must keep alerting; the check forgets one that was delivered only once, and a peer
 * left in no cluster (`forgetWatchdog`, `forgetPeer`).
 *
 * Single-item conditional writes only (dynalite and DynamoDB alike).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '../core/zod.js';
import { ifConditionHolds } from './conditional.js';
import { parseItem, parseOptional, stringSet } from './stored-item.js';
import { keyPart } from './keys.js';

/** One Alertmanager peer's own deliveries. */
export interface PeerRecord {
  /** Its `externalURL` (see `heartbeatSource`). */
  alertmanager: string;
  /** When it last delivered a heartbeat, epoch milliseconds. */
  lastSeenMs: number;
}

/** The missing-heartbeat alert as raised, kept until its resolve is delivered. */
export interface RaisedAlert {
  /** Its `startsAt`, epoch milliseconds. */
  sinceMs: number;
  labels: Record<string, string>;
}

/** One heartbeat alert and the cluster of peers that delivered it. */
export interface WatchdogRecord {
  /** Alertmanager's `fingerprint` of the heartbeat alert. */
  fingerprint: string;
  /** When any peer last delivered it, epoch milliseconds. */
  lastSeenMs: number;
  /**
   * Delivered more than once: a cluster whose heartbeat repeats. One delivered once (a Watchdog posted
   * to Alertmanager's API by hand, then resolved) is forgotten when silent, never raised. Records
   * written before deliveries were counted are established.
   */
  established: boolean;
  /** The `externalURL`s that ever delivered it, sorted. */
  peers: string[];
  raised?: RaisedAlert;
}

export interface HeartbeatSnapshot {
  /** When the check first ran against this table, epoch milliseconds. */
  armedSinceMs: number;
  peers: PeerRecord[];
  watchdogs: WatchdogRecord[];
  /** Names whose item could not be read (the read failed): the others are in the snapshot. */
  unreadable: { name: string; error: Error }[];
}

/** What {@link HeartbeatStore.seen} did not record: the set of peers or of heartbeat alerts is full. */
export interface SeenRefusal {
  /** The peer was new and the peers are at `maxEntries`: nothing was recorded. */
  peer: boolean;
  /** New fingerprints beyond `maxEntries` heartbeat alerts: not recorded. */
  fingerprints: string[];
}

/** Port for heartbeat state; one adapter, {@link DynamoDbHeartbeatStore}. */
export interface HeartbeatStore {
  /**
   * Records that `alertmanager` delivered the heartbeat alerts `fingerprints` at `nowMs` (never moves
   * `lastSeen` back), each name passed through `keyPart`.
   * @returns what was refused for lack of room (nothing, normally)
   */
  seen(alertmanager: string, fingerprints: string[], nowMs: number): Promise<SeenRefusal>;
  /** Arms the check at `nowMs` unless it already is, and reads every peer and heartbeat alert. */
  snapshot(nowMs: number): Promise<HeartbeatSnapshot>;
  /** Records `raised` for the heartbeat alert `fingerprint`; `false` when one already is (another check raised it). */
  markMissing(fingerprint: string, raised: RaisedAlert): Promise<boolean>;
  /** Clears the mark raised at `sinceMs` (a newer mark stays). */
  clearMissing(fingerprint: string, sinceMs: number): Promise<void>;
  /** Forgets a heartbeat alert last seen at `lastSeenMs`; `false` when it was delivered since. */
  forgetWatchdog(fingerprint: string, lastSeenMs: number): Promise<boolean>;
  /** Forgets a peer last seen at `lastSeenMs`; `false` when it delivered since. */
  forgetPeer(alertmanager: string, lastSeenMs: number): Promise<boolean>;
}

/** Default most peers, and most heartbeat alerts, recorded (`HEARTBEAT_MAX_CLUSTERS`). */
export const DEFAULT_MAX_HEARTBEAT_ENTRIES = 20;

type UpdateInput = Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>;

const LIST_KEY = { pk: 'heartbeats' };
const peerKey = (alertmanager: string) => ({ pk: `heartbeat#${keyPart(alertmanager)}` });
const watchdogKey = (fingerprint: string) => ({ pk: `heartbeat-watchdog#${keyPart(fingerprint)}` });
const NEWER = { ConditionExpression: 'attribute_not_exists(lastSeen) OR lastSeen < :now' };
/** A name joins a set of the list item only while the set has room (or already holds it). */
const ROOM = (set: string) => `attribute_not_exists(${set}) OR contains(${set}, :name) OR size(${set}) < :max`;

export class DynamoDbHeartbeatStore implements HeartbeatStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #maxEntries: number;

  /** @param maxEntries most peers, and most heartbeat alerts, recorded ({@link DEFAULT_MAX_HEARTBEAT_ENTRIES}) */
  constructor(client: DynamoDBClient, tableName: string, maxEntries = DEFAULT_MAX_HEARTBEAT_ENTRIES) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = tableName;
    this.#maxEntries = maxEntries;
  }

  async seen(alertmanager: string, fingerprints: string[], nowMs: number): Promise<SeenRefusal> {
    const am = keyPart(alertmanager);
    const fps = [...new Set(fingerprints.map(keyPart))];
    if (fps.length === 0) return { peer: false, fingerprints: [] }; // no heartbeat alert, no sign of life
    if (!(await this.#admit('alertmanagers', am))) return { peer: true, fingerprints: fps };
    const admitted = await Promise.all(fps.map((fp) => this.#admit('watchdogs', fp)));
    const refused = fps.filter((_, i) => !admitted[i]);
    await Promise.all([
      this.#conditional({
        Key: peerKey(am),
        UpdateExpression: 'SET lastSeen = :now',
        ...NEWER,
        ExpressionAttributeValues: { ':now': nowMs },
      }),
      ...fps.filter((_, i) => admitted[i]).map((fp) => this.#watchdogSeen(fp, am, nowMs)),
    ]);
    return { peer: false, fingerprints: refused };
  }

  async snapshot(nowMs: number): Promise<HeartbeatSnapshot> {
    const list = await this.#doc.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: LIST_KEY,
        ReturnValues: 'ALL_NEW',
        UpdateExpression: 'SET armedSince = if_not_exists(armedSince, :now)',
        ExpressionAttributeValues: { ':now': nowMs },
      }),
    );
    const attrs = parseItem(listSchema, list.Attributes);
    const unreadable: HeartbeatSnapshot['unreadable'] = [];
    const [peers, watchdogs] = await Promise.all([
      this.#items('alertmanagers', attrs.alertmanagers, unreadable, (alertmanager, item) => ({
        alertmanager,
        lastSeenMs: item.lastSeen,
      })),
      this.#items('watchdogs', attrs.watchdogs, unreadable, toWatchdog),
    ]);
    return { armedSinceMs: attrs.armedSince, peers, watchdogs, unreadable };
  }

  markMissing(fingerprint: string, raised: RaisedAlert): Promise<boolean> {
    return this.#conditional({
      Key: watchdogKey(fingerprint),
      UpdateExpression: 'SET missingSince = :s, raisedLabels = :l',
      ConditionExpression: 'attribute_exists(lastSeen) AND attribute_not_exists(missingSince)',
      ExpressionAttributeValues: { ':s': raised.sinceMs, ':l': raised.labels },
    });
  }

  async clearMissing(fingerprint: string, sinceMs: number): Promise<void> {
    await this.#conditional({
      Key: watchdogKey(fingerprint),
      UpdateExpression: 'REMOVE missingSince, raisedLabels',
      ConditionExpression: 'missingSince = :s',
      ExpressionAttributeValues: { ':s': sinceMs },
    });
  }

  forgetWatchdog(fingerprint: string, lastSeenMs: number): Promise<boolean> {
    const item = { set: 'watchdogs', key: watchdogKey(fingerprint), name: keyPart(fingerprint) } as const;
    return this.#forget(item, lastSeenMs, ['firstSeen', 'deliveries', 'peers', 'missingSince', 'raisedLabels']);
  }

  forgetPeer(alertmanager: string, lastSeenMs: number): Promise<boolean> {
    const item = { set: 'alertmanagers', key: peerKey(alertmanager), name: keyPart(alertmanager) } as const;
    return this.#forget(item, lastSeenMs, []);
  }

  /**
   * Empties the item (an item without `lastSeen` is read as absent; no `DeleteItem`, which the
   * function's role is not granted) unless it was seen since `lastSeenMs`, then takes the name out of
   * its set (a delivery in between adds it back: every delivery adds its names).
   * @param item the item's key, and its name in the list item's `set`
   * @param attributes what else the item holds, removed with `lastSeen`
   */
  async #forget(
    { set, key, name }: { set: 'watchdogs' | 'alertmanagers'; key: { pk: string }; name: string },
    lastSeenMs: number,
    attributes: string[],
  ): Promise<boolean> {
    const emptied = await this.#conditional({
      Key: key,
      UpdateExpression: `REMOVE ${['lastSeen', ...attributes].join(', ')}`,
      ConditionExpression: 'lastSeen = :seen',
      ExpressionAttributeValues: { ':seen': lastSeenMs },
    });
    if (emptied) await this.#removeName(set, name);
    return emptied;
  }

  async #removeName(set: 'watchdogs' | 'alertmanagers', ...names: string[]): Promise<void> {
    await this.#update({
      Key: LIST_KEY,
      UpdateExpression: `DELETE ${set} :names`,
      ExpressionAttributeValues: { ':names': new Set(names) },
    });
  }

  /** Adds `name` to `set` of the list item when it has room; `false` when the set is full. */
  #admit(set: 'watchdogs' | 'alertmanagers', name: string): Promise<boolean> {
    return this.#conditional({
      Key: LIST_KEY,
      UpdateExpression: `ADD ${set} :names`,
      ConditionExpression: ROOM(set),
      ExpressionAttributeValues: { ':names': new Set([name]), ':name': name, ':max': this.#maxEntries },
    });
  }

  async #watchdogSeen(fp: string, am: string, nowMs: number): Promise<void> {
    const newer = await this.#conditional({
      Key: watchdogKey(fp),
      UpdateExpression:
        'SET lastSeen = :now, firstSeen = if_not_exists(firstSeen, :now) ADD peers :am, deliveries :one',
      ...NEWER,
      ExpressionAttributeValues: { ':now': nowMs, ':am': new Set([am]), ':one': 1 },
    });
    // An older delivery than the one recorded still names a peer of the cluster, and is a delivery.
    if (!newer)
      await this.#update({
        Key: watchdogKey(fp),
        UpdateExpression: 'ADD peers :am, deliveries :one',
        ExpressionAttributeValues: { ':am': new Set([am]), ':one': 1 },
      });
  }

  /**
   * Reads the items named in the list's `set` (consistently), each on its own: one whose read fails is
   * reported in `unreadable` and the others are read; a name without its item (forgotten, deleted by
   * hand, or a fingerprint too long for a key from before keys were bounded) is taken out of the set.
   */
  async #items<T>(
    set: 'watchdogs' | 'alertmanagers',
    names: Set<string> | undefined,
    unreadable: HeartbeatSnapshot['unreadable'],
    build: (name: string, item: StoredItem) => T,
  ): Promise<T[]> {
    const key = set === 'watchdogs' ? watchdogKey : peerKey;
    const sorted = [...(names ?? [])].sort();
    const reads = await Promise.allSettled(
      sorted.map((name) =>
        this.#doc.send(new GetCommand({ TableName: this.#table, Key: key(name), ConsistentRead: true })),
      ),
    );
    const found: T[] = [];
    const absent: string[] = [];
    reads.forEach((read, i) => {
      const name = sorted[i]!;
      const item = read.status === 'fulfilled' ? parsedItem(read.value.Item) : { error: read.reason as Error };
      if ('error' in item) unreadable.push({ name, error: item.error });
      else if (item.lastSeen === undefined) absent.push(name);
      else found.push(build(name, { ...item, lastSeen: item.lastSeen }));
    });
    if (absent.length) await this.#removeName(set, ...absent);
    return found;
  }

  async #update(input: UpdateInput): Promise<void> {
    await this.#doc.send(new UpdateCommand({ TableName: this.#table, ...input }));
  }

  /** @returns `false` when the condition failed */
  async #conditional(input: UpdateInput): Promise<boolean> {
    return (await ifConditionHolds(this.#update(input).then(() => true))) ?? false;
  }
}

/** The `heartbeats` item, as the arming write returns it. */
const listSchema = z.object({
  armedSince: z.number(),
  alertmanagers: z.optional(stringSet()),
  watchdogs: z.optional(stringSet()),
});

/** A peer's or a heartbeat alert's item (`lastSeen` absent: emptied, read as absent). */
const storedSchema = z.object({
  lastSeen: z.optional(z.number()),
  deliveries: z.optional(z.number()),
  peers: z.optional(stringSet()),
  missingSince: z.optional(z.number()),
  raisedLabels: z.optional(z.record(z.string(), z.string())),
});
type StoredItem = z.infer<typeof storedSchema> & { lastSeen: number };

/** An item read, parsed; one that does not match its layout is unreadable, as a failed read is. */
function parsedItem(raw: unknown): z.infer<typeof storedSchema> | { lastSeen?: undefined } | { error: Error } {
  try {
    return parseOptional(storedSchema, raw) ?? {};
  } catch (error) {
    return { error: error as Error };
  }
}

function toWatchdog(fingerprint: string, item: StoredItem): WatchdogRecord {
  const raised =
    item.missingSince !== undefined && item.raisedLabels
      ? { sinceMs: item.missingSince, labels: item.raisedLabels }
      : undefined;
  return {
    fingerprint,
    lastSeenMs: item.lastSeen,
    established: item.deliveries === undefined || item.deliveries > 1,
    peers: [...(item.peers ?? [])].sort(),
    ...(raised && { raised }),
  };
}
