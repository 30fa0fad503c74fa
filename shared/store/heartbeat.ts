/**
 * Heartbeat state in the dedupe table, a few items the check reads instead of scanning the table:
 * - `heartbeat-watchdog#<fingerprint>`, one per heartbeat alert (Alertmanager's `fingerprint` of the
 *   Watchdog's labels, the same from every peer of an HA cluster): `lastSeen` (epoch ms of its latest
 *   delivery by any peer), `peers` (string set of the `externalURL`s that delivered it: the cluster),
 *   and while `AlertingPipelineHeartbeatMissing` is raised for it `missingSince` (epoch ms, its
 *   `startsAt`) and `raisedLabels` (the labels raised, so the resolve carries the same ones);
 * - `heartbeat#<externalURL>`, one per Alertmanager peer: `lastSeen` (its own latest delivery; only
 *   for the per-peer gauge: a passive HA peer rightly stops delivering);
 * - `heartbeats`: `alertmanagers` and `watchdogs`, string sets of every peer and fingerprint seen,
 *   and `armedSince` (epoch ms of the first check, so "never received for a full timeout" survives a
 *   Lambda cold start; with `npm start`'s in-memory store it is the process's first check).
 * None expires: a cluster that was seen and falls silent must keep alerting. To forget one for
 * good, delete its `heartbeat-watchdog#…` item (the check then ignores it).
 *
 * Single-item conditional writes only (dynalite and DynamoDB alike).
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';

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
  /** The `externalURL`s that ever delivered it, sorted. */
  peers: string[];
  raised?: RaisedAlert;
}

export interface HeartbeatSnapshot {
  /** When the check first ran against this table, epoch milliseconds. */
  armedSinceMs: number;
  peers: PeerRecord[];
  watchdogs: WatchdogRecord[];
}

/** Port for heartbeat state; one adapter, {@link DynamoDbHeartbeatStore}. */
export interface HeartbeatStore {
  /** Records that `alertmanager` delivered the heartbeat alerts `fingerprints` at `nowMs` (never moves `lastSeen` back). */
  seen(alertmanager: string, fingerprints: string[], nowMs: number): Promise<void>;
  /** Arms the check at `nowMs` unless it already is, and reads every peer and heartbeat alert. */
  snapshot(nowMs: number): Promise<HeartbeatSnapshot>;
  /** Records `raised` for the heartbeat alert `fingerprint`; `false` when one already is (another check raised it). */
  markMissing(fingerprint: string, raised: RaisedAlert): Promise<boolean>;
  /** Clears the mark raised at `sinceMs` (a newer mark stays). */
  clearMissing(fingerprint: string, sinceMs: number): Promise<void>;
}

type UpdateInput = Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>;

const LIST_KEY = { pk: 'heartbeats' };
const peerKey = (alertmanager: string) => ({ pk: `heartbeat#${alertmanager}` });
const watchdogKey = (fingerprint: string) => ({ pk: `heartbeat-watchdog#${fingerprint}` });
const NEWER = { ConditionExpression: 'attribute_not_exists(lastSeen) OR lastSeen < :now' };

export class DynamoDbHeartbeatStore implements HeartbeatStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;

  constructor(client: DynamoDBClient, tableName: string) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = tableName;
  }

  async seen(alertmanager: string, fingerprints: string[], nowMs: number): Promise<void> {
    if (fingerprints.length === 0) return; // DynamoDB refuses an empty set; no heartbeat alert, no sign of life
    const am = new Set([alertmanager]);
    await Promise.all([
      this.#conditional({ Key: peerKey(alertmanager), UpdateExpression: 'SET lastSeen = :now', ...NEWER, ExpressionAttributeValues: { ':now': nowMs } }),
      this.#update({ Key: LIST_KEY, UpdateExpression: 'ADD alertmanagers :am, watchdogs :fp', ExpressionAttributeValues: { ':am': am, ':fp': new Set(fingerprints) } }),
      ...fingerprints.map(async (fp) => {
        const newer = await this.#conditional({ Key: watchdogKey(fp), UpdateExpression: 'SET lastSeen = :now ADD peers :am', ...NEWER, ExpressionAttributeValues: { ':now': nowMs, ':am': am } });
        // An older delivery than the one recorded still names a peer of the cluster.
        if (!newer) await this.#update({ Key: watchdogKey(fp), UpdateExpression: 'ADD peers :am', ExpressionAttributeValues: { ':am': am } });
      }),
    ]);
  }

  async snapshot(nowMs: number): Promise<HeartbeatSnapshot> {
    const list = await this.#doc.send(new UpdateCommand({
      TableName: this.#table, Key: LIST_KEY, ReturnValues: 'ALL_NEW',
      UpdateExpression: 'SET armedSince = if_not_exists(armedSince, :now)', ExpressionAttributeValues: { ':now': nowMs },
    }));
    const attrs = list.Attributes as { armedSince: number; alertmanagers?: Set<string>; watchdogs?: Set<string> };
    const [peers, watchdogs] = await Promise.all([
      this.#items(attrs.alertmanagers, peerKey, (alertmanager, item) => ({ alertmanager, lastSeenMs: item.lastSeen })),
      this.#items(attrs.watchdogs, watchdogKey, toWatchdog),
    ]);
    return { armedSinceMs: attrs.armedSince, peers, watchdogs };
  }

  markMissing(fingerprint: string, raised: RaisedAlert): Promise<boolean> {
    return this.#conditional({
      Key: watchdogKey(fingerprint), UpdateExpression: 'SET missingSince = :s, raisedLabels = :l',
      ConditionExpression: 'attribute_exists(lastSeen) AND attribute_not_exists(missingSince)', ExpressionAttributeValues: { ':s': raised.sinceMs, ':l': raised.labels },
    });
  }

  async clearMissing(fingerprint: string, sinceMs: number): Promise<void> {
    await this.#conditional({ Key: watchdogKey(fingerprint), UpdateExpression: 'REMOVE missingSince, raisedLabels', ConditionExpression: 'missingSince = :s', ExpressionAttributeValues: { ':s': sinceMs } });
  }

  /** Reads the items named in `names` (consistently); a deleted one is left out. */
  async #items<T>(names: Set<string> | undefined, key: (name: string) => { pk: string }, build: (name: string, item: StoredItem) => T): Promise<T[]> {
    const sorted = [...(names ?? [])].sort();
    const items = await Promise.all(sorted.map((name) => this.#doc.send(new GetCommand({ TableName: this.#table, Key: key(name), ConsistentRead: true }))));
    return items.flatMap((out, i) => {
      const item = out.Item as StoredItem | undefined;
      return item?.lastSeen === undefined ? [] : [build(sorted[i]!, item)];
    });
  }

  async #update(input: UpdateInput): Promise<void> {
    await this.#doc.send(new UpdateCommand({ TableName: this.#table, ...input }));
  }

  /** @returns `false` when the condition failed */
  async #conditional(input: UpdateInput): Promise<boolean> {
    try {
      await this.#update(input);
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException || (err as Error).name === 'ConditionalCheckFailedException') return false;
      throw err;
    }
  }
}

interface StoredItem {
  lastSeen: number;
  peers?: Set<string>;
  missingSince?: number;
  raisedLabels?: Record<string, string>;
}

function toWatchdog(fingerprint: string, item: StoredItem): WatchdogRecord {
  const raised = item.missingSince !== undefined && item.raisedLabels ? { sinceMs: item.missingSince, labels: item.raisedLabels } : undefined;
  return { fingerprint, lastSeenMs: item.lastSeen, peers: [...(item.peers ?? [])].sort(), ...(raised && { raised }) };
}
