/**
 * Property test of the alert-event state machine (`shared/store/occurrence.ts`) through the real
 * pipeline and the DynamoDB ledger on dynalite: random interleavings (fast-check's scheduler) of 2–3
 * HA peers posting the states Alertmanager went through (firing, resolves by a missed resend,
 * re-fires, the real resolve), lagging behind, retrying, channels refusing, and deliverers dying
 * (SIGKILL-like: before a channel's send, or after a channel accepted and before its ledger write).
 *
 * With a source of truth configured, once the peers have posted the final state until answered 200:
 * - each channel's last message is the alert's last real state;
 * - each channel gets each event (status, generation) at most once and in order, except a copy right
 *   after a death between a channel's acceptance and its ledger write (docs/delivery.md's one duplicate case).
 * Run twice: with alert records whose write carries the delivery mark (`shared/store/delivery-mark.ts`) and
 * is the ledger write a death may interrupt, and with record writes that fail, so that every delivery goes to
 * the head's own ledger.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookMessage } from '../../shared/alertmanager/schema.js';
import type { AlertStateSource } from '../../shared/alert-state/types.js';
import { DeliveryError, type Channel } from '../../shared/channels/channel.js';
import { alertStores } from '../../shared/store/alert-stores.js';
import type { AlertStores } from '../../shared/store/alert-record.js';
import { DynamoDbDedupeStore } from '../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import type { DedupeStore } from '../../shared/store/dedupe.js';
import { processGroup } from '../../shared/pipeline/index.js';
import { fixture } from '../helpers/fixtures.js';
import { testDeps } from '../helpers/pipeline-deps.js';

const LEASE_MS = 60_000;
const CHANNELS = ['slack', 'sns'] as const;
const ZERO = '0001-01-01T00:00:00Z';
let db: LocalDynamoDb;
let store: DynamoDbDedupeStore;
let records: AlertStores;
/** Whether the pipeline writes alert records (the delivery mark); set per test. */
let withRecords = false;
let runs = 0;

beforeAll(async () => {
  db = await startLocalDynamoDb('occurrence-property');
  store = new DynamoDbDedupeStore(db.client, { tableName: db.tableName, ttlSeconds: 86_400, leaseMs: LEASE_MS });
  records = alertStores(db.client, { tableName: db.tableName, ttlSeconds: 86_400 });
});
afterAll(async () => db.close());

/** What one post does to its deliverer: a channel refuses, or the deliverer dies around a channel's send. */
interface Fault {
  refuse: [boolean, boolean];
  death?: { channel: 0 | 1; afterAccept: boolean };
}
type Command =
  | { t: 'posts'; posts: { peer: number; lag: number; fault: Fault }[] }
  | { t: 'alertmanager'; change: 'missed resend' | 'resent' | 'real resolve' }
  | { t: 'tick' };

const fault: fc.Arbitrary<Fault> = fc.record({
  refuse: fc.tuple(fc.boolean(), fc.boolean()),
  death: fc.option(fc.record({ channel: fc.constantFrom(0 as const, 1 as const), afterAccept: fc.boolean() }), {
    freq: 4,
    nil: undefined,
  }),
});
const command = (peers: number): fc.Arbitrary<Command> =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        t: fc.constant('posts' as const),
        posts: fc.array(
          fc.record({
            peer: fc.nat(peers - 1),
            lag: fc.nat(2),
            fault: fc.oneof({ weight: 3, arbitrary: fc.constant<Fault>({ refuse: [false, false] }) }, fault),
          }),
          { minLength: 1, maxLength: 3 },
        ),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        t: fc.constant('alertmanager' as const),
        change: fc.constantFrom('missed resend' as const, 'resent' as const, 'real resolve' as const),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ t: 'tick' as const }) },
  );

/** One run's world: Alertmanager's successive states of the alert, the truth, the channels' messages. */
class World {
  /** Each run is its own alert, so runs share one table. */
  readonly fingerprint = `run-${++runs}`;
  constructor(readonly scheduler: fc.Scheduler) {}
  readonly states: { status: 'firing' | 'resolved'; endsAt: string }[] = [{ status: 'firing', endsAt: ZERO }];
  truth: 'firing' | 'resolved' = 'firing';
  clock = Date.parse('2026-11-29T13:00:00Z');
  readonly received: Record<string, string[]> = { slack: [], sns: [] };
  /** Per peer, the states it posted and was answered 200 for: Alertmanager does not send a resolve again after that. */
  readonly answered: Set<number>[] = [new Set(), new Set(), new Set()];
  /** "Firing again" messages sent while the source of truth said resolved: there must be none. */
  readonly againWhileResolved: string[] = [];
  /** Deaths after a channel accepted and before its ledger write completed: the only allowed duplicates. */
  readonly deathsAfterAccept: Record<string, number> = { slack: 0, sns: 0 };

  change(change: 'missed resend' | 'resent' | 'real resolve'): void {
    const last = this.states.at(-1)!;
    if (this.truth === 'resolved') return;
    if (change === 'resent' && last.status === 'resolved') this.states.push({ status: 'firing', endsAt: ZERO });
    if (change !== 'resent' && last.status === 'firing')
      this.states.push({
        status: 'resolved',
        endsAt: new Date(Date.parse('2026-11-29T12:00:00Z') + this.states.length * 60_000).toISOString(),
      });
    if (change === 'real resolve') {
      // Prometheus re-sends a still-firing alert every `resend_delay` (1 min): after a missed resend
      // Alertmanager hears it fire again before the real resolve (docs/delivery.md's limit: a resolve within
      // that minute leaves a re-fire announced from a stale copy as the last word).
      if (last.status === 'resolved')
        this.states.push(
          { status: 'firing', endsAt: ZERO },
          {
            status: 'resolved',
            endsAt: new Date(Date.parse('2026-11-29T12:00:00Z') + (this.states.length + 1) * 60_000).toISOString(),
          },
        );
      this.truth = 'resolved';
    }
  }

  body(index: number): WebhookMessage {
    const message = fixture('firing-kv-cache-critical');
    const state = this.states[index]!;
    message.status = state.status;
    Object.assign(message.alerts[0]!, state, { fingerprint: this.fingerprint });
    return message;
  }
}

const never = new Promise<never>(() => {});

/** One delivery attempt's dependencies: dead once `die()` ran, every store call and send then hangs, as in a killed process. */
function deliverer(world: World, store: DedupeStore, s: fc.Scheduler, source: AlertStateSource, f: Fault) {
  let dead = false;
  let onDeath: () => void = () => {};
  const died = new Promise<'died'>((ok) => (onDeath = () => ok('died')));
  // Channels that accepted in this attempt and whose ledger write has not completed: a death now
  // leaves "sent but not recorded", docs/delivery.md's one duplicate case, whichever channel it interrupts.
  const unrecorded = new Set<string>();
  const die = () => {
    dead = true;
    for (const name of unrecorded) world.deathsAfterAccept[name]! += 1;
    onDeath();
  };
  // Each store call is a scheduling point too, so claims of concurrent posts interleave with sends.
  const live =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      dead
        ? never
        : s
            .schedule(Promise.resolve(), 'store')
            .then(() => (dead ? never : fn(...args)))
            .then((r) => (dead ? never : r));
  const crashable: DedupeStore = {
    readMany: live(store.readMany.bind(store)),
    claim: live(store.claim.bind(store)),
    confirm: live(store.confirm.bind(store)),
    markDelivered: (alert, event, channel) =>
      live(store.markDelivered.bind(store))(alert, event, channel).then(() => {
        for (const name of [channel].flat()) unrecorded.delete(name);
      }),
    release: live(store.release.bind(store)),
  };
  // The record write with the delivery mark is the ledger write of a fully delivered alert.
  const { records: r, history: h } = records;
  const recordStore: AlertStores = {
    ...records,
    records: {
      get: r.get.bind(r),
      getMany: r.getMany.bind(r),
      addChannels: r.addChannels.bind(r),
      recordNotified: (...args) =>
        (withRecords ? live(r.recordNotified.bind(r)) : recordsDown)(...args).then((written) => {
          if (args[0].deliveredEvent) for (const name of args[0].channels) unrecorded.delete(name);
          return written;
        }),
    },
    history: { add: h.add.bind(h), last: h.last.bind(h), flush: live(h.flush.bind(h)) },
  };
  const channels: Channel[] = CHANNELS.map((name, i) => ({
    name,
    send: async (n) => {
      await s.schedule(Promise.resolve(), `${name} send`);
      if (dead) return never;
      if (f.death?.channel === i && !f.death.afterAccept) return (die(), never);
      if (f.refuse[i]) throw new DeliveryError(`${name} refused`, { retryable: false });
      const event = `${n.alerts[0]!.status}#${n.generations?.[n.alerts[0]!.fingerprint] ?? 0}`;
      world.received[name]!.push(event);
      if (event.startsWith('firing#') && event !== 'firing#0' && world.truth !== 'firing')
        world.againWhileResolved.push(`${name}: ${event}`);
      unrecorded.add(name);
      if (f.death?.channel === i && f.death.afterAccept) return (die(), never);
    },
  }));
  return { store: crashable, channels, died, alertState: source, recordStore };
}

/**
 * Peer `peer` posts Alertmanager's state `index` (a lagging view), never one older than a state it
 * was answered 200 for: Alertmanager flushes a group's notifications one after the other, so a peer
 * does not retry an old state after a newer one went out. Its answer is remembered.
 */
async function postAs(world: World, peer: number, index: number, f: Fault): Promise<number | 'died'> {
  const view = Math.max(0, index, ...world.answered[peer]!);
  const status = await post(world, store, world.scheduler, view, f);
  if (status === 200) world.answered[peer]!.add(view);
  return status;
}

async function post(
  world: World,
  store: DedupeStore,
  s: fc.Scheduler,
  peerView: number,
  f: Fault,
): Promise<number | 'died'> {
  const source: AlertStateSource = {
    statesOf: async (alerts) => {
      await s.schedule(Promise.resolve(), 'source of truth');
      return new Map(alerts.map((a) => [a.fingerprint, { state: world.truth, source: 'prometheus' as const }]));
    },
  };
  const d = deliverer(world, store, s, source, f);
  const deps = testDeps({
    store: d.store,
    alerts: d.recordStore,
    channels: d.channels,
    delivery: { timeoutMs: 5_000, retries: 0, budgetMs: 5_000 },
    flapWindowMs: 0,
    now: () => world.clock,
    alertState: d.alertState,
  });
  const run = processGroup(world.body(peerView), deps).then((r) => (r.ok ? 200 : 503));
  return Promise.race([run, d.died]);
}

/** A record store that cannot be reached: every delivery is then written to the head's own ledger. */
const recordsDown = async (): Promise<never> => {
  throw new Error('alert records unreachable (test)');
};

/** Events per channel must rise strictly: (generation, firing < resolved); equal only as a death's copy. */
function checkOrder(events: string[], allowedCopies: number): void {
  const rank = (e: string) => {
    const [status, g] = e.split('#');
    return Number(g) * 2 + (status === 'resolved' ? 1 : 0);
  };
  let copies = 0;
  for (let i = 1; i < events.length; i++) {
    const [a, b] = [rank(events[i - 1]!), rank(events[i]!)];
    if (a === b) copies++;
    else expect(b, `out of order: ${events.join(' ')}`).toBeGreaterThan(a);
  }
  expect(copies, `duplicates beyond the deaths after acceptance: ${events.join(' ')}`).toBeLessThanOrEqual(
    allowedCopies,
  );
}

describe.each([
  ['the head’s own ledger: record writes fail', false],
  ['alert records carrying the delivery mark', true],
])('the alert-event state machine under HA peers, retries, failures and restarts (%s)', (_, records) => {
  /**
   * Random runs, and one case found before, replayed by its seed and shrink path (fast-check's replay): a
   * re-fire a channel had refused, retried by a lagging peer after the real resolve, was sent as FIRING.
   */
  it.each([
    ['random interleavings', { numRuns: 30 }],
    [
      'a pending re-fire retried after the real resolve',
      {
        numRuns: 1,
        seed: 1993953759,
        path: '14:7:6:6:10:9:10:10:10:14:13:13:13:16:17:17:17:4:4:4:6:10:10:10:9:9:10:10:10',
        endOnFailure: true,
      },
    ],
  ] as const)(
    'ends with every channel saying the last real state, each at most once and in order: %s',
    async (_, options) => {
      withRecords = records;
      await fc.assert(
        fc.asyncProperty(
          fc
            .integer({ min: 2, max: 3 })
            .chain((peers) => fc.tuple(fc.constant(peers), fc.array(command(peers), { minLength: 3, maxLength: 12 }))),
          fc.scheduler(),
          async ([peers, commands], s) => {
            const world = new World(s);
            for (const c of commands) {
              if (c.t === 'alertmanager') world.change(c.change);
              if (c.t === 'tick') world.clock += LEASE_MS + 1;
              if (c.t === 'posts')
                await s.waitFor(
                  Promise.all(c.posts.map((p) => postAs(world, p.peer, world.states.length - 1 - p.lag, p.fault))),
                );
            }
            // Quiescence: leases of the dead run out, Prometheus re-sends a still-firing alert, and each
            // peer posts Alertmanager's final state until answered 200: a firing again (`repeat_interval`),
            // a resolve only if that peer was never answered 200 for it.
            world.clock += LEASE_MS + 1;
            if (world.truth === 'firing') world.change('resent');
            const last = world.states.length - 1;
            for (let peer = 0; peer < peers; peer++) {
              if (world.truth === 'resolved' && world.answered[peer]!.has(last)) continue;
              let status: number | 'died' = 0;
              for (let attempt = 0; attempt < 4 && status !== 200; attempt++)
                status = await s.waitFor(postAs(world, peer, last, { refuse: [false, false] }));
              expect(status).toBe(200);
            }
            expect(world.againWhileResolved).toEqual([]);
            for (const name of CHANNELS) {
              const events = world.received[name]!;
              expect(
                events.at(-1)?.split('#')[0],
                `${name}: ${events.join(' ')} (states ${world.states.map((x) => x.status).join(' ')})`,
              ).toBe(world.truth);
              checkOrder(events, world.deathsAfterAccept[name]!);
            }
          },
        ),
        options,
      );
    },
    120_000,
  );
});
