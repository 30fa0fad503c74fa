/**
 * DynamoDB adapter of {@link DedupeStore}: one item per alert occurrence, its head (`head-item.ts`),
 * moved through the state machine of `occurrence.ts` by single-item conditional writes only (no
 * transactions, no batched writes), the same on DynamoDB and on the dynalite of `npm start` and the
 * tests. DynamoDB deletes expired items late and dynalite never does, so reads treat an item whose
 * `expiresAt` has passed as absent.
 *
 * Cost per alert, when the pipeline reads the group first (`readMany`, one BatchGetItem per 50
 * alerts): a new firing or a resolve of a known firing is one conditional write; a resend
 * (`repeat_interval`, an HA duplicate) none. Asked alone (`claim` without what was read), the likely
 * write is tried first and a resend costs a failed write and a read. Writes return the item only
 * where it is read (`ReturnValues`).
 *
 * The group's read is eventually consistent (0.5 read units per item up to 4 KB, not 1): it is a hint,
 * never the authority. A stale "not found" (a peer's claim not yet visible) leads to the conditional
 * `PutItem` of a new head, which fails; the claim then reads strongly consistent and the alert is the
 * duplicate it is. A stale "found" of a head no longer there is an item TTL has just deleted: it was
 * already expired, and every read treats an expired item as absent, so the new occurrence is claimed.
 * A stale version of a head that is still there is an older state of it: a step that writes (a new
 * occurrence, a resolve, a re-fire) is conditional on the state and generation the hint showed and reads
 * again if they moved; a step that sends on the alert record's delivery mark or acknowledgement alone
 * (a repair, a renewed firing) or waits on another delivery reads again first (`trustsHint`). What a
 * stale hint can still decide is `already notified` for a post in the state the hint showed delivered,
 * when a post of the other state moved the head within the last second or so (DynamoDB's usual
 * propagation). Alertmanager sends one alert's state changes a `group_interval` apart, so such a post is
 * an HA peer's lagging copy, which a strong read would drop too (`stale copy`), unless the alert fired
 * again within a second of its resolve: then its next resend (`repeat_interval`) announces it.
 * `claim`'s own reads (`#read`, `#get`) and every write stay strongly consistent.
 *
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.ConditionExpressions.html
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/TTL.html
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { batchGet, type RawItem } from './batch-get.js';
import { ifConditionHolds } from './conditional.js';
import { applyMark } from './delivery-mark.js';
import {
  headItemSchema,
  incoming,
  isLive,
  legacyHead,
  NAMES,
  setOrRemove,
  toHead,
  type HeadItem,
} from './head-item.js';
import { generationKey, headKey, legacyResolvedKey, recordKey } from './keys.js';
import { ledgerDecision, nextStep, type Head, type OccurrenceState } from './occurrence.js';
import { withSilenceEnd } from './silence-end.js';
import { recordViewSchema, type RecordView, type Seen } from './seen.js';
import { parseOptional, StoredItemError } from './stored-item.js';
import type { AlertEvent, Claim, ClaimedEvent, DedupeDecision, DedupeStore } from './dedupe.js';

export interface DynamoDbDedupeStoreOptions {
  tableName: string;
  /** How long an item is kept, seconds. */
  ttlSeconds: number;
  /** How long a claim excludes other deliverers, milliseconds; must exceed the delivery budget. */
  leaseMs?: number;
}

/** Longer than the whole delivery budget (retries included) and the Lambda time-out (30 s). */
export const DEFAULT_LEASE_MS = 60_000;
/** Read-decide-write rounds before a claim that keeps losing races answers `in flight` (the retry settles it). */
const MAX_ROUNDS = 3;
/** `readMany` reads eventually consistent (half the read units): its answer is a hint, see the header. */
const HINT = false;

/** One `UpdateItem` on a head, its expressions in parts. */
interface Update {
  set?: string[];
  remove?: string[];
  add?: string[];
  delete?: string[];
  condition?: string;
  values?: Record<string, unknown>;
}

/** The head as read (delivery mark applied) and its item's `expiresAt`, epoch seconds. */
interface Read {
  head?: Head & { marked?: true };
  expiresAt: number;
}

/**
 * What the dedupe reads use of a head and of an alert record ({@link RecordView}): the record's stored
 * alert and enrichment (most of its size) are not read, so a duplicate costs little.
 */
const READ_ATTRIBUTES: readonly string[] = [
  ...Object.values(NAMES),
  'startsAt',
  'deliveredEvent',
  'runCount',
  'runSince',
  // The acknowledgement (its silence's end): a few dozen bytes, in records of acknowledged alerts only.
  'ack',
  // The channels it reached: a resolve goes to escalation's too (`shared/pipeline/claim.ts`).
  'channels',
] satisfies (keyof (HeadItem & RecordView))[];

export class DynamoDbDedupeStore implements DedupeStore {
  readonly #doc: DynamoDBDocumentClient;
  readonly #table: string;
  readonly #ttlSeconds: number;
  readonly #leaseMs: number;

  /** @param client a configured DynamoDB client (real AWS, dynalite or any endpoint) */
  constructor(client: DynamoDBClient, options: DynamoDbDedupeStoreOptions) {
    this.#doc = DynamoDBDocumentClient.from(client);
    this.#table = options.tableName;
    this.#ttlSeconds = options.ttlSeconds;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  }

  /**
   * The two items a claim needs of each alert (head, record), in one BatchGetItem per 50 alerts. A group
   * larger than `newRecordsUpTo` reads its heads first, then the records of the alerts with a live head
   * (their delivery mark) and, when at most `newRecordsUpTo` have none, theirs too (flap runs): a storm
   * of new alerts reads half the keys, in one round more. An alert whose items do not parse is left unread
   * (its claim reads them again, and says which).
   */
  async readMany(
    alerts: AlertEvent[],
    nowMs: number,
    options: { newRecordsUpTo?: number } = {},
  ): Promise<(Seen | undefined)[]> {
    const upTo = options.newRecordsUpTo ?? Number.POSITIVE_INFINITY;
    if (alerts.length <= upTo) return this.#readItems(alerts, () => true);
    const heads = await batchGet(this.#doc, this.#table, alerts.map(headKey), {
      attributes: READ_ATTRIBUTES,
      consistent: HINT,
    });
    const live = (a: AlertEvent) => {
      const head = heads.get(headKey(a));
      return typeof head?.expiresAt === 'number' && isLive({ expiresAt: head.expiresAt }, nowMs);
    };
    const fresh = alerts.filter((a) => !live(a)).length;
    return this.#readItems(alerts, (a) => live(a) || fresh <= upTo, heads);
  }

  /** Reads the heads not in `heads` and the records where `withRecord`; an alert whose keys went unread is `undefined`. */
  async #readItems(
    alerts: AlertEvent[],
    withRecord: (alert: AlertEvent) => boolean,
    heads?: Map<string, RawItem | undefined>,
  ): Promise<(Seen | undefined)[]> {
    const keys = alerts.flatMap((a) => [
      ...(heads ? [] : [headKey(a)]),
      ...(withRecord(a) ? [recordKey(a.fingerprint)] : []),
    ]);
    const read = new Map([
      ...(heads ?? []),
      ...(await batchGet(this.#doc, this.#table, keys, { attributes: READ_ATTRIBUTES, consistent: HINT })),
    ]);
    return alerts.map((a) => {
      const [head, record, recordRead] = [headKey(a), recordKey(a.fingerprint), withRecord(a)];
      if (!read.has(head) || (recordRead && !read.has(record))) return undefined;
      try {
        return seenOf(read.get(head), recordRead ? read.get(record) : undefined, recordRead);
      } catch (err) {
        if (err instanceof StoredItemError) return undefined;
        throw err;
      }
    });
  }

  async claim(alert: AlertEvent, channels: string[], nowMs: number, seen?: Seen): Promise<Claim> {
    if (!seen) {
      // The likely write first: a firing is usually new, a resolve usually ends a known firing.
      const first =
        alert.status === 'firing'
          ? await this.#start(alert, channels, nowMs)
          : await this.#resolve(alert, channels, nowMs);
      if (first) return first;
    }
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const hint = round === 0 && seen;
      const read = hint ? await this.#fromItems(alert, seen.head, seen.record, nowMs) : await this.#read(alert, nowMs);
      // A send that no conditional write can check against a stale hint: read again, strongly consistent.
      if (hint && !trustsHint(read, alert, nowMs)) continue;
      const claim = await this.#step(alert, read, channels, nowMs);
      if (claim) return claim;
    }
    return claimOf(alert, 'in flight', [], 0);
  }

  /** The state machine's step for what was read; `undefined` when its write lost a race (read again). */
  async #step(
    alert: AlertEvent,
    { head, expiresAt }: Read,
    channels: string[],
    nowMs: number,
  ): Promise<Claim | undefined> {
    // Delivered by the record's mark: the item's `pending` is stale, the lease read stands for it.
    const seenLease = head?.marked ? head.leaseUntil : undefined;
    const generation = head?.generation ?? 0;
    switch (nextStep(head, incoming(alert), nowMs)) {
      case 'start':
        return this.#start(alert, channels, nowMs);
      case 'resolve':
        return this.#resolve(alert, channels, nowMs, { generation, seenLease });
      case 'ledger':
        return this.#ledger(alert, { head: head!, expiresAt }, channels, nowMs);
      case 'renew':
        return (await this.#refire(alert, channels, nowMs, { generation, seenLease, from: 'firing' }))
          ? claimOf(alert, 'silence ended', [...channels], generation + 1)
          : undefined;
      case 'confirm':
        return claimOf(alert, 'resolved before', [], generation);
      case 'confirm resolve':
        return claimOf(alert, 'fired again since', [], generation);
      case 'wait':
        return claimOf(alert, 'in flight', [], generation);
    }
  }

  async confirm(alert: AlertEvent, candidate: Claim, channels: string[], nowMs: number): Promise<Claim> {
    const g = candidate.event.generation;
    const move =
      alert.status === 'resolved'
        ? async (seenLease?: number) =>
            this.#resolve(alert, channels, nowMs, { generation: g, confirmed: true, seenLease })
        : async (seenLease?: number) =>
            (await this.#refire(alert, channels, nowMs, { generation: g, seenLease }))
              ? claimOf(alert, 'firing again', [...channels], g + 1)
              : undefined;
    const moved = await move();
    if (moved) return moved;
    // Another deliverer moved it first, or the other state is still being delivered (or delivered, by the record's mark).
    const other = alert.status === 'resolved' ? 'firing' : 'resolved';
    let { head, expiresAt } = await this.#read(alert, nowMs);
    if (head?.marked && head.state === other && head.generation === g) {
      const marked = await move(head.leaseUntil);
      if (marked) return marked;
      ({ head, expiresAt } = await this.#read(alert, nowMs));
    }
    return head?.state === alert.status
      ? this.#ledger(alert, { head, expiresAt }, channels, nowMs)
      : claimOf(alert, 'in flight', [], head?.generation ?? g);
  }

  /**
   * RESOLVED(g) → FIRING(g+1) (a re-fire) or, `from` firing, FIRING(g) → FIRING(g+1) (its silence ended),
   * unless the state is in flight; `seenLease`: the lease read with a delivery mark.
   */
  async #refire(
    alert: AlertEvent,
    channels: string[],
    nowMs: number,
    { generation: g, seenLease, from = 'resolved' }: { generation: number; seenLease?: number; from?: OccurrenceState },
  ): Promise<boolean> {
    const state = this.#newState('firing', channels, nowMs);
    return this.#update(headKey(alert), {
      set: [...state.set, '#gen = :g1'],
      remove: state.remove,
      condition: `#st = :from AND #gen = :g AND ${notInFlight(seenLease)} AND #x > :nowSec`,
      values: {
        ...state.values,
        ':g1': g + 1,
        ':g': g,
        ':from': from,
        ':now': nowMs,
        ':nowSec': sec(nowMs),
        ...(seenLease !== undefined && { ':seen': seenLease }),
      },
    });
  }

  async markDelivered(alert: AlertEvent, event: ClaimedEvent, channel: string | string[]): Promise<void> {
    const channels = new Set([channel].flat());
    if (channels.size === 0) return;
    // Conditional on the event: a late write of a superseded state must not touch its successor's ledger.
    const same = sameEvent(event);
    await this.#update(headKey(alert), {
      delete: ['#p :c'],
      add: ['#d :c'],
      condition: same.condition,
      values: { ':c': channels, ...same.values },
    });
  }

  async release(alert: AlertEvent, event: ClaimedEvent): Promise<void> {
    const same = sameEvent(event);
    await this.#update(headKey(alert), {
      set: ['#l = :zero'],
      condition: same.condition,
      values: { ':zero': 0, ...same.values },
    });
  }

  /** Creates the head in the post's state, generation 0, unless a live one exists. */
  async #start(alert: AlertEvent, channels: string[], nowMs: number): Promise<Claim | undefined> {
    const put = new PutCommand({
      TableName: this.#table,
      Item: this.#headItem(alert, channels, nowMs),
      ConditionExpression: 'attribute_not_exists(pk) OR expiresAt <= :nowSec',
      ExpressionAttributeValues: { ':nowSec': sec(nowMs) },
    });
    const created = await ifConditionHolds(this.#doc.send(put));
    return created && claimOf(alert, 'first notification', [...channels], 0);
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

  /**
   * FIRING(g) → RESOLVED(g) unless the firing is in flight or the post is a stale copy (see
   * `occurrence.ts`); `generation` when known, else any (the write returns which). `confirmed`: the
   * source of truth said resolved, so a resolve no newer than the last one is not stale.
   */
  async #resolve(
    alert: AlertEvent,
    channels: string[],
    nowMs: number,
    known: { generation?: number; confirmed?: boolean; seenLease?: number } = {},
  ): Promise<Claim | undefined> {
    const { generation, confirmed = false, seenLease } = known;
    const endsAtMs = incoming(alert).endsAtMs;
    const state = this.#newState('resolved', channels, nowMs);
    const ends = setOrRemove('#e', ':ends', endsAtMs);
    const conditions = ['#st = :firing', notInFlight(seenLease), '#x > :nowSec'];
    if (generation !== undefined) conditions.push('#gen = :g');
    if (endsAtMs !== undefined && !confirmed) conditions.push('(attribute_not_exists(#e) OR #e < :ends)');
    const update: Update = {
      set: [...state.set, ...(ends.set ? [ends.set] : [])],
      remove: [...state.remove, ...(ends.remove ? [ends.remove] : [])],
      condition: conditions.join(' AND '),
      values: {
        ...state.values,
        ':firing': 'firing',
        ':now': nowMs,
        ':nowSec': sec(nowMs),
        ...(generation !== undefined && { ':g': generation }),
        ...(ends.set && { ':ends': ends.value }),
        ...(seenLease !== undefined && { ':seen': seenLease }),
      },
    };
    if (generation !== undefined)
      return (await this.#update(headKey(alert), update))
        ? claimOf(alert, 'first notification', [...channels], generation)
        : undefined;
    const item = await this.#updateReturning(headKey(alert), update);
    return item && claimOf(alert, 'first notification', [...channels], item.generation ?? 0);
  }

  /** A post in the head's own state: dedupe on its ledger, taking the lease over for a repair. */
  async #ledger(
    alert: AlertEvent,
    { head, expiresAt: expiresAtSec }: { head: Head; expiresAt: number },
    channels: string[],
    nowMs: number,
  ): Promise<Claim> {
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
    const repaired = head.pending.filter((c) => channels.includes(c));
    return taken ? claimOf(alert, 'repair', repaired, g) : claimOf(alert, 'in flight', [], g);
  }

  /**
   * An alert still being resent (`repeat_interval`) is still firing: once past half its TTL, its
   * record is extended, so an alert firing longer than the TTL is not announced again as new.
   * One write per half-TTL per alert, not one per resend.
   */
  async #keepAlive(alert: AlertEvent, expiresAtSec: number, nowMs: number): Promise<void> {
    if (expiresAtSec - sec(nowMs) > this.#ttlSeconds / 2) return;
    await this.#update(headKey(alert), {
      set: ['#x = :exp'],
      condition: 'attribute_exists(pk)',
      values: { ':exp': sec(nowMs) + this.#ttlSeconds },
    });
  }

  /**
   * The head as the state machine reads it (and its `expiresAt`, epoch seconds); a legacy
   * occurrence is migrated first, by one conditional write that the first reader wins.
   * @throws StoredItemError when an item does not match its layout
   */
  async #read(alert: AlertEvent, nowMs: number): Promise<Read> {
    const [head, record] = [headKey(alert), recordKey(alert.fingerprint)];
    const read = await batchGet(this.#doc, this.#table, [head, record], { attributes: READ_ATTRIBUTES });
    if (!read.has(head) || !read.has(record)) throw new Error(`dedupe read of ${head} left unprocessed`);
    const seen = seenOf(read.get(head), read.get(record), true);
    return this.#fromItems(alert, seen.head, seen.record, nowMs);
  }

  /** The head from its item and its delivery mark (read by `#read` or `readMany`), a legacy occurrence migrated. */
  async #fromItems(
    alert: AlertEvent,
    item: HeadItem | undefined,
    record: RecordView | undefined,
    nowMs: number,
  ): Promise<Read> {
    const head = toHead(item, nowMs);
    if (head || item?.state)
      return { head: head && this.#withRecord(head, alert, record, nowMs), expiresAt: item?.expiresAt ?? 0 };
    const resolved = needsLegacyResolve(alert, item, nowMs) ? await this.#get(legacyResolvedKey(alert)) : undefined;
    const legacy = legacyHead(item, resolved, nowMs);
    if (!legacy) return { expiresAt: 0 };
    await this.#migrate(alert, legacy);
    const migrated = await this.#get(headKey(alert));
    const moved = toHead(migrated, nowMs);
    return { head: moved && this.#withRecord(moved, alert, record, nowMs), expiresAt: migrated?.expiresAt ?? 0 };
  }

  /** The head as the record says: its delivery mark applied, its acknowledgement's silence end (`silence-end.ts`). */
  #withRecord(head: Head, alert: AlertEvent, record: RecordView | undefined, nowMs: number): Head & { marked?: true } {
    return withSilenceEnd(applyMark(head, alert, record, nowMs), alert, record, nowMs);
  }

  /** Writes a legacy occurrence's state into its head (unless another reader did first). */
  async #migrate(alert: AlertEvent, legacy: NonNullable<ReturnType<typeof legacyHead>>): Promise<void> {
    const pending = setOrRemove('#p', ':p', legacy.pending);
    const delivered = setOrRemove('#d', ':d', legacy.delivered);
    await this.#update(headKey(alert), {
      set: ['#st = :s', '#gen = :zero', '#l = :l', '#x = :x', ...present(pending.set, delivered.set)],
      remove: present(pending.remove, delivered.remove),
      condition: 'attribute_not_exists(#st)',
      values: {
        ':s': legacy.state,
        ':zero': 0,
        ':l': legacy.leaseUntil,
        ':x': legacy.expiresAt,
        ...(pending.set && { ':p': pending.value }),
        ...(delivered.set && { ':d': delivered.value }),
      },
    });
  }

  /** The SET/REMOVE parts that start a state's ledger: every channel pending, none delivered, our lease. */
  #newState(
    state: Head['state'],
    channels: string[],
    nowMs: number,
  ): Required<Pick<Update, 'set' | 'remove' | 'values'>> {
    const pending = setOrRemove('#p', ':p', channels);
    return {
      set: ['#st = :state', '#l = :lease', '#c = :claimed', '#x = :exp', ...(pending.set ? [pending.set] : [])],
      remove: ['#d', ...(pending.remove ? [pending.remove] : [])],
      values: {
        ':state': state,
        ':lease': nowMs + this.#leaseMs,
        ':claimed': nowMs,
        ':exp': sec(nowMs) + this.#ttlSeconds,
        ...(pending.set && { ':p': pending.value }),
      },
    };
  }

  /** @throws StoredItemError */
  async #get(key: string): Promise<HeadItem | undefined> {
    const out = await this.#doc.send(
      new GetCommand({ TableName: this.#table, Key: { pk: key }, ConsistentRead: true }),
    );
    return parseOptional(headItemSchema, out.Item);
  }

  /** One conditional `UpdateItem`: whether its condition held. */
  async #update(key: string, u: Update): Promise<boolean> {
    return (await ifConditionHolds(this.#doc.send(this.#command(key, u)))) !== undefined;
  }

  /** One conditional `UpdateItem` returning the item as written, or `undefined` when its condition failed. */
  async #updateReturning(key: string, u: Update): Promise<HeadItem | undefined> {
    const out = await ifConditionHolds(this.#doc.send(this.#command(key, u, 'ALL_NEW')));
    return out && parseOptional(headItemSchema, out.Attributes);
  }

  #command(key: string, u: Update, returnValues?: 'ALL_NEW'): UpdateCommand {
    const clauses = [
      ['SET', u.set],
      ['REMOVE', u.remove],
      ['ADD', u.add],
      ['DELETE', u.delete],
    ] as const;
    const expression = clauses
      .flatMap(([verb, parts]) => (parts?.length ? [`${verb} ${parts.join(', ')}`] : []))
      .join(' ');
    const text = `${expression} ${u.condition ?? ''}`;
    return new UpdateCommand({
      TableName: this.#table,
      Key: { pk: key },
      UpdateExpression: expression,
      ...(u.condition && { ConditionExpression: u.condition }),
      ExpressionAttributeNames: Object.fromEntries(
        Object.entries(NAMES).filter(([n]) => new RegExp(`${n}\\b`).test(text)),
      ),
      ...(u.values && Object.keys(u.values).length && { ExpressionAttributeValues: u.values }),
      ...(returnValues && { ReturnValues: returnValues }),
    });
  }
}

/**
 * Whether the step a hint (`readMany`'s eventually consistent read) leads to may be taken from it: a new
 * occurrence, a resolve or a candidate re-fire is decided by a conditional write on the head, which fails
 * if the hint was stale (the claim then reads again); `already notified` sends nothing. A repair, a renewed
 * firing after a silence and a wait for another delivery are decided by the record's delivery mark or
 * acknowledgement, or would answer 5xx: a stale hint could send twice or make Alertmanager retry, so those
 * read again, strongly consistent (they are rare: a lease that ran out, an ended silence, a race).
 */
function trustsHint({ head }: Read, alert: AlertEvent, nowMs: number): boolean {
  const step = nextStep(head, incoming(alert), nowMs);
  if (step === 'renew' || step === 'wait') return false;
  return step !== 'ledger' || ledgerDecision(head!, nowMs) === 'already notified';
}

/** What a read found of one alert, parsed. @throws StoredItemError */
function seenOf(head: RawItem | undefined, record: RawItem | undefined, recordRead: boolean): Seen {
  return {
    head: parseOptional(headItemSchema, head),
    record: parseOptional(recordViewSchema, record),
    recordRead,
  };
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
  return seenLease === undefined
    ? '(attribute_not_exists(#p) OR #l <= :now)'
    : '(attribute_not_exists(#p) OR #l <= :now OR #l = :seen)';
}

/** The condition that the head still holds `event` (a late write of a superseded state changes nothing). */
function sameEvent(event: ClaimedEvent): { condition: string; values: Record<string, unknown> } {
  return { condition: '#st = :evs AND #gen = :evg', values: { ':evs': event.status, ':evg': event.generation } };
}

function claimOf(alert: AlertEvent, decision: DedupeDecision, pending: string[], generation: number): Claim {
  return { decision, pending, event: { key: generationKey(alert, generation), status: alert.status, generation } };
}

const sec = (ms: number) => Math.floor(ms / 1000);

/** The clauses that are there. */
const present = (...clauses: (string | undefined)[]): string[] => clauses.filter((c): c is string => !!c);
