/**
 * DynamoDB adapter of {@link DedupeStore}: one item per alert occurrence, its head (`head-item.ts`),
 * moved through the state machine of `occurrence.ts` by single-item conditional writes only (no
 * transactions), which real DynamoDB and dynalite both support. DynamoDB deletes expired items late
 * and dynalite never does, so reads treat an item whose `expiresAt` has passed as absent.
 *
 * Cost per alert, when the pipeline reads the group first (`readMany`, one BatchGetItem per 50
 * alerts): a new firing or a resolve of a known firing is one conditional write; a resend
 * (`repeat_interval`, an HA duplicate) none. Asked alone (`claim` without what was read), the likely
 * write is tried first and a resend costs a failed write and a read, as before generations existed.
 * Writes return the item only where it is read (`ReturnValues`).
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { RECORD_SPACE, recordKey } from './alert-record-items.js';
import { batchGet } from './batch-get.js';
import { applyMark, type RecordMark } from './delivery-mark.js';
import { noteFiring, runFromRecord, type RecordRun } from './flap-record.js';
import { headKey, incoming, isLive, legacyHead, legacyResolvedKey, NAMES, setOrRemove, toHead, type HeadItem } from './head-item.js';
import { withKeys } from './key-locks.js';
import { ledgerDecision, nextStep, type Head } from './occurrence.js';
import { lockKey, MIN_BATCH, startMany } from './start-many.js';
import { unchangedSince, watchWrites, writeMark } from './write-epoch.js';
import { generationKey, type AlertEvent, type Claim, type ClaimedEvent, type DedupeDecision, type DedupeStore, type FlapRun, type Seen } from './dedupe.js';

export interface DynamoDbDedupeStoreOptions {
  tableName: string;
  /** How long an item is kept, seconds. */
  ttlSeconds: number;
  /** How long a claim excludes other deliverers, milliseconds; must exceed the delivery budget. */
  leaseMs?: number;
  /**
   * This process is the table's only writer (the embedded store of `npm start`): head writes take
   * in-process key locks, and {@link DynamoDbDedupeStore.startMany} creates new heads in batches
   * (`start-many.ts`). Never for a table another process writes (DynamoDB, a shared dynalite).
   */
  exclusive?: boolean;
}

/** Longer than the whole delivery budget (retries included) and the Lambda time-out (30 s). */
export const DEFAULT_LEASE_MS = 60_000;
/** Read-decide-write rounds before a claim that keeps losing races answers `in flight` (the retry settles it). */
const MAX_ROUNDS = 3;

interface Update {
  set?: string[];
  remove?: string[];
  add?: string[];
  delete?: string[];
  condition?: string;
  values?: Record<string, unknown>;
  /** Return the item as written (`ReturnValues: ALL_NEW`); only where a caller reads it. */
  returnItem?: true;
}

/**
 * What a batched read holds for one alert, each maybe absent: its head item and its alert record
 * (whose delivery mark may say the head's event is delivered, `delivery-mark.ts`). A legacy resolve
 * item is read apart, only where it can matter ({@link needsLegacyResolve}).
 */
interface ReadItems extends Seen {
  readonly items: readonly [HeadItem | undefined, (RecordMark & RecordRun) | undefined];
  /** On an exclusive table, the client's write count when the read was sent (`write-epoch.ts`). */
  readonly mark?: number;
  /** The record was not read (a storm's new alert, `readMany`'s `newRecordsUpTo`): no flap run from it. */
  readonly recordUnread?: true;
  /** On an exclusive table, the client's count of record writes when the read was sent (`write-epoch.ts`). */
  readonly recordMark?: number;
}

/** A head or a record as a batched read returns it (one key space). */
type ReadItem = HeadItem & RecordMark & RecordRun;

/** The head as read (delivery mark applied) and its item's `expiresAt`, epoch seconds. */
interface Read {
  head?: Head & { marked?: true };
  expiresAt: number;
}

export class DynamoDbDedupeStore implements DedupeStore {
  readonly #client: DynamoDBClient;
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ttlSeconds: number;
  readonly #leaseMs: number;
  readonly #exclusive: boolean;

  /** @param client a configured DynamoDB client (real AWS, dynalite or any endpoint) */
  constructor(client: DynamoDBClient, options: DynamoDbDedupeStoreOptions) {
    this.#client = client;
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#exclusive = options.exclusive ?? false;
    if (this.#exclusive) watchWrites(client);
  }

  /**
   * See {@link DedupeStore.startMany}: with `exclusive`, the firing posts whose read found no live
   * head are created in batches under in-process locks (`start-many.ts`; not read again when this
   * process has sent no write since that read); else none (no request).
   */
  async startMany(entries: { alert: AlertEvent; channels: string[]; seen?: Seen }[], nowMs: number): Promise<(Claim | undefined)[]> {
    const candidates = new Set(this.#exclusive ? batchCandidates(entries, nowMs) : []);
    if (candidates.size < MIN_BATCH) return entries.map(() => undefined);
    const marks = new Set([...candidates].map((e) => (e.seen as ReadItems).mark));
    const unchanged = () => marks.size === 1 && unchangedSince(this.#client, [...marks][0]);
    const created = await startMany(this.#doc, this.#table, [...candidates].map((e) => this.#headItem(e.alert, e.channels, nowMs)), nowMs, unchanged);
    return entries.map((e) => (candidates.has(e) && created.has(headKey(e.alert)) ? claimOf(e.alert, 'first notification', [...e.channels], 0) : undefined));
  }

  /** See {@link DedupeStore.unseen}: a firing whose read found no live head (what {@link startMany} batches too). */
  unseen(alert: AlertEvent, seen: Seen, nowMs: number): boolean {
    return alert.status === 'firing' && !liveHead(seen, nowMs);
  }

  /**
   * The two items `#read` needs of each alert (head, record), in one BatchGetItem per 50 alerts. A group
   * larger than `newRecordsUpTo` reads its heads first, then the records of the alerts with a live head
   * (their delivery mark) and, when at most `newRecordsUpTo` have none, theirs too (flap runs): a storm
   * of new alerts reads half the keys, in one round more.
   */
  // `nowMs` is part of the port: expiry is judged by `claim`, which gets the same time.
  async readMany(alerts: AlertEvent[], nowMs: number, options: { newRecordsUpTo?: number } = {}): Promise<(Seen | undefined)[]> {
    const mark = this.#exclusive ? { all: writeMark(this.#client), records: writeMark(this.#client, RECORD_SPACE) } : undefined;
    const upTo = options.newRecordsUpTo ?? Number.POSITIVE_INFINITY;
    if (alerts.length <= upTo) return this.#readItems(alerts, alerts.map(() => true), mark);
    const heads = await batchGet<ReadItem>(this.#doc, this.#table, alerts.map(headKey), READ_ATTRIBUTES);
    const live = alerts.map((a) => heads.has(headKey(a)) && isLive(heads.get(headKey(a)) ?? { expiresAt: 0 }, nowMs));
    const fresh = live.filter((l) => !l).length;
    return this.#readItems(alerts, live.map((l) => l || fresh <= upTo), mark, heads);
  }

  /** Reads the heads not in `heads` and the records where `withRecord`; a record not read is left out of the answer. */
  async #readItems(alerts: AlertEvent[], withRecord: boolean[], mark: { all?: number; records?: number } | undefined, heads?: Map<string, ReadItem | undefined>): Promise<(Seen | undefined)[]> {
    const keys = alerts.flatMap((a, i) => [...(heads ? [] : [headKey(a)]), ...(withRecord[i] ? [recordKey(a.fingerprint)] : [])]);
    const read = new Map([...(heads ?? []), ...(await batchGet<ReadItem>(this.#doc, this.#table, keys, READ_ATTRIBUTES))]);
    return alerts.map((a, i) => {
      const [head, record] = itemKeys(a);
      if (!read.has(head) || (withRecord[i] && !read.has(record))) return undefined;
      return { items: [read.get(head), read.get(record)], ...(!withRecord[i] && { recordUnread: true as const }), ...(mark?.all !== undefined && { mark: mark.all }), ...(mark?.records !== undefined && { recordMark: mark.records }) } satisfies ReadItems;
    });
  }

  async claim(alert: AlertEvent, channels: string[], nowMs: number, seen?: Seen): Promise<Claim> {
    if (!seen) {
      // The likely write first: a firing is usually new, a resolve usually ends a known firing.
      const first = alert.status === 'firing' ? await this.#start(alert, channels, nowMs) : await this.#resolve(alert, channels, nowMs);
      if (first) return first;
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const { head, expiresAt } = round === 0 && seen ? await this.#fromItems(alert, (seen as ReadItems).items, nowMs) : await this.#read(alert, nowMs);
      // Delivered by the record's mark: the item's `pending` is stale, the lease read stands for it.
      const seenLease = head?.marked ? head.leaseUntil : undefined;
      const generation = head?.generation ?? 0;
      switch (nextStep(head, incoming(alert), nowMs)) {
        case 'start': {
          const claim = await this.#start(alert, channels, nowMs);
          if (claim) return claim;
          break;
        }
        case 'resolve': {
          const claim = await this.#resolve(alert, channels, nowMs, generation, false, seenLease);
          if (claim) return claim;
          break;
        }
        case 'ledger':
          return this.#ledger(alert, head!, expiresAt, channels, nowMs);
        case 'confirm':
          return claimOf(alert, 'resolved before', [], generation);
        case 'confirm resolve':
          return claimOf(alert, 'fired again since', [], generation);
        case 'wait':
          return claimOf(alert, 'in flight', [], generation);
      }
    }
    return claimOf(alert, 'in flight', [], 0);
  }

  async confirm(alert: AlertEvent, candidate: Claim, channels: string[], nowMs: number): Promise<Claim> {
    const g = candidate.event.generation;
    if (alert.status === 'resolved') {
      const claim = await this.#resolve(alert, channels, nowMs, g, true);
      if (claim) return claim;
      let { head, expiresAt } = await this.#read(alert, nowMs);
      // Delivered by the record's mark (the item still lists its channels as pending): try again on the lease read.
      if (head?.marked && head.state === 'firing' && head.generation === g) {
        const marked = await this.#resolve(alert, channels, nowMs, g, true, head.leaseUntil);
        if (marked) return marked;
        ({ head, expiresAt } = await this.#read(alert, nowMs));
      }
      return head?.state === 'resolved' ? this.#ledger(alert, head, expiresAt, channels, nowMs) : claimOf(alert, 'in flight', [], head?.generation ?? g);
    }
    if (await this.#refire(alert, g, channels, nowMs)) return claimOf(alert, 'firing again', [...channels], g + 1);
    // Another deliverer moved it first, or its resolve is still being delivered (or delivered, by the record's mark).
    let { head, expiresAt } = await this.#read(alert, nowMs);
    if (head?.marked && head.state === 'resolved' && head.generation === g) {
      if (await this.#refire(alert, g, channels, nowMs, head.leaseUntil)) return claimOf(alert, 'firing again', [...channels], g + 1);
      ({ head, expiresAt } = await this.#read(alert, nowMs));
    }
    if (head?.state === 'firing') return this.#ledger(alert, head, expiresAt, channels, nowMs);
    return claimOf(alert, 'in flight', [], head?.generation ?? g);
  }

  /** RESOLVED(g) → FIRING(g+1) unless the resolve is in flight; `seenLease`: the lease read with a delivery mark. */
  async #refire(alert: AlertEvent, g: number, channels: string[], nowMs: number, seenLease?: number): Promise<boolean> {
    const state = this.#newState('firing', channels, nowMs);
    const moved = await this.#update(headKey(alert), {
      set: [...state.set, '#gen = :g1'],
      remove: state.remove,
      condition: `#st = :resolved AND #gen = :g AND ${notInFlight(seenLease)} AND #x > :nowSec`,
      values: { ...state.values, ':g1': g + 1, ':g': g, ':resolved': 'resolved', ':now': nowMs, ':nowSec': sec(nowMs), ...(seenLease !== undefined && { ':seen': seenLease }) },
    });
    return moved !== undefined;
  }

  async markDelivered(alert: AlertEvent, event: ClaimedEvent, channel: string | string[]): Promise<void> {
    const channels = new Set([channel].flat());
    if (channels.size === 0) return;
    // Conditional on the event: a late write of a superseded state must not touch its successor's ledger.
    await this.#update(headKey(alert), { delete: ['#p :c'], add: ['#d :c'], ...this.#sameEvent(event), values: { ':c': channels, ...this.#sameEvent(event).values } });
  }

  async release(alert: AlertEvent, event: ClaimedEvent): Promise<void> {
    await this.#update(headKey(alert), { set: ['#l = :zero'], ...this.#sameEvent(event), values: { ':zero': 0, ...this.#sameEvent(event).values } });
  }

  /** See {@link DedupeStore.noteFiring}; the record is item `flap#<fingerprint>` (`flap-record.ts`). */
  noteFiring(fingerprint: string, startsAtMs: number, windowMs: number, nowMs: number): Promise<FlapRun> {
    return noteFiring(this.#doc, this.#table, fingerprint, { startsAtMs, windowMs, nowMs });
  }

  /** See {@link DedupeStore.runOf}: the run from the alert record read with the head. */
  runOf(alert: AlertEvent, seen: Seen, windowMs: number, nowMs: number): FlapRun | undefined {
    const { items, recordUnread } = seen as ReadItems;
    return items.length === 2 && !recordUnread ? runFromRecord(items[1], Date.parse(alert.startsAt), windowMs, nowMs) : undefined;
  }

  /** See {@link DedupeStore.recordAbsent}: the record read with the head was absent (exclusive table only). */
  recordAbsent(seen: Seen): number | undefined {
    const { items, recordUnread, recordMark } = seen as ReadItems;
    return recordMark !== undefined && !recordUnread && items.length === 2 && items[1] === undefined ? recordMark : undefined;
  }

  /** See {@link DedupeStore.recordFound}. */
  recordFound(seen: Seen): boolean {
    const { items, recordUnread } = seen as ReadItems;
    return items.length === 2 && !recordUnread && items[1] !== undefined;
  }

  /** Creates the head in the post's state, generation 0, unless a live one exists. */
  async #start(alert: AlertEvent, channels: string[], nowMs: number): Promise<Claim | undefined> {
    const item = this.#headItem(alert, channels, nowMs);
    try {
      await this.#locked(item.pk, () => this.#doc.send(new PutCommand({ TableName: this.#table, Item: item, ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :nowSec', ExpressionAttributeValues: { ':nowSec': sec(nowMs) } })));
      return claimOf(alert, 'first notification', [...channels], 0);
    } catch (err) {
      ignoreConditionFailed(err);
      return undefined;
    }
  }

  /** A new head in the post's state, generation 0, every channel pending under our lease. */
  #headItem(alert: AlertEvent, channels: string[], nowMs: number): HeadItem {
    const endsAtMs = incoming(alert).endsAtMs;
    return {
      pk: headKey(alert),
      state: alert.status,
      generation: 0,
      // An empty channel list (nothing configured) still records the event as seen.
      ...(channels.length && { pending: new Set(channels) }),
      leaseUntil: nowMs + this.#leaseMs,
      claimedAt: nowMs,
      ...(alert.status === 'resolved' && endsAtMs !== undefined && { resolvedEndsAtMs: endsAtMs }),
      expiresAt: sec(nowMs) + this.#ttlSeconds,
    };
  }

  /** Runs a write of `key` under its in-process lock when the table is exclusive (`start-many.ts` writes without conditions). */
  #locked<T>(key: string, write: () => Promise<T>): Promise<T> {
    return this.#exclusive ? withKeys([lockKey(this.#table, key)], write) : write();
  }

  /**
   * FIRING(g) → RESOLVED(g) unless the firing is in flight or the post is a stale copy (see
   * `occurrence.ts`); `generation` when known, else any (the write returns which). `confirmed`: the
   * source of truth said resolved, so a resolve no newer than the last one is not stale.
   */
  async #resolve(alert: AlertEvent, channels: string[], nowMs: number, generation?: number, confirmed = false, seenLease?: number): Promise<Claim | undefined> {
    const endsAtMs = incoming(alert).endsAtMs;
    const state = this.#newState('resolved', channels, nowMs);
    const ends = setOrRemove('#e', ':ends', endsAtMs);
    const conditions = ['#st = :firing', notInFlight(seenLease), '#x > :nowSec'];
    if (generation !== undefined) conditions.push('#gen = :g');
    if (endsAtMs !== undefined && !confirmed) conditions.push('(attribute_not_exists(#e) OR #e < :ends)');
    const item = await this.#update(headKey(alert), {
      set: [...state.set!, ...(ends.set ? [ends.set] : [])],
      remove: [...state.remove!, ...(ends.remove ? [ends.remove] : [])],
      condition: conditions.join(' AND '),
      values: { ...state.values, ':firing': 'firing', ':now': nowMs, ':nowSec': sec(nowMs), ...(generation !== undefined && { ':g': generation }), ...(ends.set && { ':ends': ends.value }), ...(seenLease !== undefined && { ':seen': seenLease }) },
      ...(generation === undefined && { returnItem: true as const }),
    });
    return item ? claimOf(alert, 'first notification', [...channels], generation ?? item.generation ?? 0) : undefined;
  }

  /** A post in the head's own state: dedupe on its ledger, taking the lease over for a repair. */
  async #ledger(alert: AlertEvent, head: Head, expiresAtSec: number, channels: string[], nowMs: number): Promise<Claim> {
    const decision = ledgerDecision(head, nowMs);
    const g = head.generation;
    if (decision === 'already notified') await this.#keepAlive(alert, expiresAtSec, nowMs);
    if (decision !== 'repair') return claimOf(alert, decision, [], g);
    // Optimistic lease take-over: succeeds only if nobody renewed the lease or moved the state since we read it.
    const taken = await this.#update(headKey(alert), {
      set: ['#l = :lease'],
      condition: '#l = :seen AND #st = :s AND #gen = :g',
      values: { ':lease': nowMs + this.#leaseMs, ':seen': head.leaseUntil, ':s': head.state, ':g': g },
    });
    return taken ? claimOf(alert, 'repair', head.pending.filter((c) => channels.includes(c)), g) : claimOf(alert, 'in flight', [], g);
  }

  /**
   * An alert still being resent (`repeat_interval`) is still firing: once past half its TTL, its
   * record is extended, so an alert firing longer than the TTL is not announced again as new.
   * One write per half-TTL per alert, not one per resend.
   */
  async #keepAlive(alert: AlertEvent, expiresAtSec: number, nowMs: number): Promise<void> {
    if (expiresAtSec - sec(nowMs) > this.#ttlSeconds / 2) return;
    await this.#update(headKey(alert), { set: ['#x = :exp'], condition: 'attribute_exists(pk)', values: { ':exp': sec(nowMs) + this.#ttlSeconds } });
  }

  /**
   * The head as the state machine reads it (and its `expiresAt`, epoch seconds); a legacy
   * occurrence is migrated first, by one conditional write that the first reader wins.
   */
  async #read(alert: AlertEvent, nowMs: number): Promise<Read> {
    const [head, record] = [headKey(alert), recordKey(alert.fingerprint)];
    const read = await batchGet<HeadItem & RecordMark>(this.#doc, this.#table, [head, record], READ_ATTRIBUTES);
    if (!read.has(head) || !read.has(record)) throw new Error(`dedupe read of ${head} left unprocessed`);
    return this.#fromItems(alert, [read.get(head), read.get(record)], nowMs);
  }

  /** The head from its item and its delivery mark (read by `#read` or `readMany`), a legacy occurrence migrated. */
  async #fromItems(alert: AlertEvent, [item, record]: ReadItems['items'], nowMs: number): Promise<Read> {
    const head = toHead(item, nowMs);
    if (head || item?.state) return { head: head && applyMark(head, alert, record, nowMs), expiresAt: item?.expiresAt ?? 0 };
    const resolved = needsLegacyResolve(alert, item, nowMs) ? await this.#get(legacyResolvedKey(alert)) : undefined;
    const legacy = legacyHead(item, resolved, nowMs);
    if (!legacy) return { expiresAt: 0 };
    const pending = setOrRemove('#p', ':p', legacy.pending);
    const delivered = setOrRemove('#d', ':d', legacy.delivered);
    await this.#update(headKey(alert), {
      set: ['#st = :s', '#gen = :zero', '#l = :l', '#x = :x', ...[pending.set, delivered.set].filter((s): s is string => !!s)],
      remove: [pending.remove, delivered.remove].filter((s): s is string => !!s),
      condition: 'attribute_not_exists(#st)',
      values: { ':s': legacy.state, ':zero': 0, ':l': legacy.leaseUntil, ':x': legacy.expiresAt, ...(pending.set && { ':p': pending.value }), ...(delivered.set && { ':d': delivered.value }) },
    });
    const migrated = await this.#get(headKey(alert));
    const moved = toHead(migrated, nowMs);
    return { head: moved && applyMark(moved, alert, record, nowMs), expiresAt: migrated?.expiresAt ?? 0 };
  }

  /** The SET/REMOVE parts that start a state's ledger: every channel pending, none delivered, our lease. */
  #newState(state: Head['state'], channels: string[], nowMs: number): Required<Pick<Update, 'set' | 'remove' | 'values'>> {
    const pending = setOrRemove('#p', ':p', channels);
    return {
      set: ['#st = :state', '#l = :lease', '#c = :claimed', '#x = :exp', ...(pending.set ? [pending.set] : [])],
      remove: ['#d', ...(pending.remove ? [pending.remove] : [])],
      values: { ':state': state, ':lease': nowMs + this.#leaseMs, ':claimed': nowMs, ':exp': sec(nowMs) + this.#ttlSeconds, ...(pending.set && { ':p': pending.value }) },
    };
  }

  #sameEvent(event: ClaimedEvent): { condition: string; values: Record<string, unknown> } {
    return { condition: '#st = :evs AND #gen = :evg', values: { ':evs': event.status, ':evg': event.generation } };
  }

  async #get(key: string): Promise<HeadItem | undefined> {
    const out = await this.#doc.send(new GetCommand({ TableName: this.#table, Key: { pk: key }, ConsistentRead: true }));
    return out.Item as HeadItem | undefined;
  }

  /** One conditional `UpdateItem`: the new item (`returnItem`; else just its key), or `undefined` when the condition failed. */
  async #update(key: string, u: Update): Promise<HeadItem | undefined> {
    const clauses = [['SET', u.set], ['REMOVE', u.remove], ['ADD', u.add], ['DELETE', u.delete]] as const;
    const expression = clauses.filter(([, parts]) => parts?.length).map(([verb, parts]) => `${verb} ${parts!.join(', ')}`).join(' ');
    const text = `${expression} ${u.condition ?? ''}`;
    try {
      const out = await this.#locked(key, () => this.#doc.send(
        new UpdateCommand({
          TableName: this.#table,
          Key: { pk: key },
          UpdateExpression: expression,
          ...(u.condition && { ConditionExpression: u.condition }),
          ExpressionAttributeNames: Object.fromEntries(Object.entries(NAMES).filter(([n]) => new RegExp(`${n}\\b`).test(text))),
          ...(u.values && Object.keys(u.values).length && { ExpressionAttributeValues: u.values }),
          ...(u.returnItem && { ReturnValues: 'ALL_NEW' as const }),
        }),
      ));
      return (out.Attributes as HeadItem | undefined) ?? ({ pk: key } as HeadItem);
    } catch (err) {
      ignoreConditionFailed(err);
      return undefined;
    }
  }
}

/** Whether the batched read found a live head item (of any shape) for the alert. */
function liveHead(seen: Seen, nowMs: number): boolean {
  const head = (seen as ReadItems).items[0];
  return head !== undefined && isLive(head, nowMs);
}

/** The two items of an alert every claim reads: its head and its alert record. */
/**
 * What the dedupe reads use of a head and of an alert record ({@link RecordMark}, {@link RecordRun}):
 * the record's stored alert and enrichment (most of its size) are not read, so a duplicate costs little.
 */
const READ_ATTRIBUTES: readonly string[] = [...Object.values(NAMES), 'startsAt', 'deliveredEvent', 'runCount', 'runSince'] satisfies (keyof (HeadItem & RecordMark & RecordRun))[];

function itemKeys(alert: AlertEvent): [string, string] {
  return [headKey(alert), recordKey(alert.fingerprint)];
}

/**
 * Whether a legacy resolve item (written before generations, `head-item.ts`) can change the reading
 * of an alert whose head has no `state`, so that it is worth its own read:
 * - a live legacy first item: the occurrence was announced, and the resolve item says in which state;
 * - no live item and a resolved post: a resolve-only occurrence (its firing never came) announced
 *   by the old version; without the read, a resend of that resolve would be announced again.
 * Not for a firing post with no live item, the common new alert (no read): a legacy resolve item
 * then means the firing itself was never recorded, and the version that wrote it announced such a
 * firing as new too. Legacy items are gone one TTL (`DEDUPE_TTL_SECONDS`) after the upgrade.
 */
function needsLegacyResolve(alert: AlertEvent, item: HeadItem | undefined, nowMs: number): boolean {
  return item && isLive(item, nowMs) ? true : alert.status === 'resolved';
}

/**
 * The head's state is not being delivered: every channel has it, or the lease ran out, or (`seenLease`)
 * the record's delivery mark said so of the head whose lease was read, and nobody took it since.
 */
function notInFlight(seenLease: number | undefined): string {
  return seenLease === undefined ? '(attribute_not_exists(#p) OR #l <= :now)' : '(attribute_not_exists(#p) OR #l <= :now OR #l = :seen)';
}

/**
 * The posts a batched claim may create: firing, no live head read, and each alert event once (its
 * first post in the payload). A batch may not name one key twice (DynamoDB refuses the whole request:
 * the group would answer 503 to every retry); a copy's own claim then finds the key taken, as single
 * conditional claims do.
 */
function batchCandidates<E extends { alert: AlertEvent; seen?: Seen }>(entries: readonly E[], nowMs: number): E[] {
  const first = new Map<string, E>();
  for (const e of entries) if (e.alert.status === 'firing' && e.seen && !liveHead(e.seen, nowMs) && !first.has(headKey(e.alert))) first.set(headKey(e.alert), e);
  return [...first.values()];
}

function claimOf(alert: AlertEvent, decision: DedupeDecision, pending: string[], generation: number): Claim {
  return { decision, pending, event: { key: generationKey(alert, generation), status: alert.status, generation } };
}

const sec = (ms: number) => Math.floor(ms / 1000);

function ignoreConditionFailed(err: unknown): void {
  if (err instanceof Error && err.name === 'ConditionalCheckFailedException') return;
  throw err;
}
