/**
 * A crash between channels: Feishu and SNS have accepted the message while Slack is still answering, and
 * the process dies (SIGKILL-like: from then on every store call and send hangs). The restarted process,
 * on Alertmanager's retry, must send only to Slack: each channel's acceptance is in the ledger as soon as
 * that channel answered, not after a coalescing delay or the slowest channel. The crash lands once the
 * store requests started before it have completed (the ledger write itself is the one window left, see
 * docs/delivery.md). Through the real pipeline and the DynamoDB stores on dynalite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Channel } from '../../../shared/channels/channel.js';
import { processGroup } from '../../../shared/pipeline/index.js';
import type { AlertStores } from '../../../shared/store/alert-record.js';
import { alertStores } from '../../../shared/store/alert-stores.js';
import type { DedupeStore } from '../../../shared/store/dedupe.js';
import { DynamoDbDedupeStore } from '../../../shared/store/dedupe-dynamodb.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../../shared/store/local-dynamodb.js';
import { testClock } from '../../helpers/clock.js';
import { fixture } from '../../helpers/fixtures.js';
import { testDeps } from '../../helpers/pipeline-deps.js';

const LEASE_MS = 60_000;
const TTL_SECONDS = 3600;
/** Event-loop turns without a store request in flight before the crash (a write started later is not waited for). */
const QUIET_TURNS = 5;
let db: LocalDynamoDb;

beforeAll(async () => {
  db = await startLocalDynamoDb('crash-between-channels');
});
afterAll(async () => db.close());

const never = new Promise<never>(() => {});
const turn = () => new Promise<void>((ok) => setImmediate(ok));

/** One process's store and channels: `crash()` makes every later store call and send hang, as a killed process's. */
function processParts(table: { tableName: string }) {
  let dead = false;
  let inFlight = 0;
  let onDeath: () => void = () => {};
  const died = new Promise<'died'>((ok) => (onDeath = () => ok('died')));
  const live =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (dead) return never;
      inFlight++;
      try {
        const result = await fn(...args);
        return dead ? never : result;
      } finally {
        inFlight--;
      }
    };
  const real = new DynamoDbDedupeStore(db.client, { ...table, ttlSeconds: TTL_SECONDS, leaseMs: LEASE_MS });
  const store: DedupeStore = {
    readMany: live(real.readMany.bind(real)),
    claim: live(real.claim.bind(real)),
    confirm: live(real.confirm.bind(real)),
    markDelivered: live(real.markDelivered.bind(real)),
    release: live(real.release.bind(real)),
  };
  const stores = alertStores(db.client, { ...table, ttlSeconds: TTL_SECONDS });
  const { records: r, history: h } = stores;
  const alerts: AlertStores = {
    ...stores,
    records: {
      get: live(r.get.bind(r)),
      getMany: live(r.getMany.bind(r)),
      addChannels: live(r.addChannels.bind(r)),
      recordNotified: live(r.recordNotified.bind(r)),
    },
    history: { add: live(h.add.bind(h)), last: live(h.last.bind(h)), flush: live(h.flush.bind(h)) },
  };
  /** Resolves once no store request has been in flight for a few event-loop turns; then the process dies. */
  const crashWhenQuiet = async () => {
    for (let quiet = 0; quiet < QUIET_TURNS; quiet = inFlight === 0 ? quiet + 1 : 0) await turn();
    dead = true;
    onDeath();
  };
  return { store, alerts, crashWhenQuiet, died, isDead: () => dead };
}

describe('a crash after some channels accepted', () => {
  it('re-sends only to the channel that had not answered', async () => {
    const table = { tableName: db.tableName };
    const sent: Record<string, number> = { slack: 0, feishu: 0, sns: 0 };
    const clock = testClock();
    const body = fixture('firing-kv-cache-critical');

    // First process: Feishu and SNS accept at once; Slack takes the message and, while it is still
    // answering, the process is killed.
    const first = processParts(table);
    let accepted = 0;
    let bothAccepted: () => void = () => {};
    const othersDone = new Promise<void>((ok) => (bothAccepted = ok));
    const quick = (name: string): Channel => ({
      name,
      send: async () => {
        if (first.isDead()) return never;
        sent[name]! += 1;
        if (++accepted === 2) bothAccepted();
      },
    });
    const slowSlack: Channel = {
      name: 'slack',
      send: async () => {
        sent.slack! += 1;
        await othersDone;
        await first.crashWhenQuiet();
        return never;
      },
    };
    const run = processGroup(
      body,
      testDeps({
        store: first.store,
        alerts: first.alerts,
        channels: [slowSlack, quick('feishu'), quick('sns')],
        flapWindowMs: 0,
        clock,
      }),
    );
    // The first process never answers Alertmanager: it died.
    expect(await Promise.race([run.then(() => 'answered'), first.died])).toBe('died');
    expect(sent).toEqual({ slack: 1, feishu: 1, sns: 1 });

    // Restart, after the dead process's lease ran out; Alertmanager retries the same notification.
    clock.advance(LEASE_MS + 1000);
    const counting = (name: string): Channel => ({ name, send: async () => void (sent[name]! += 1) });
    const result = await processGroup(
      body,
      testDeps({
        table: db,
        store: new DynamoDbDedupeStore(db.client, { ...table, ttlSeconds: TTL_SECONDS, leaseMs: LEASE_MS }),
        channels: [counting('slack'), counting('feishu'), counting('sns')],
        flapWindowMs: 0,
        clock,
      }),
    );
    expect(result.ok).toBe(true);
    // Slack once more (it had not answered); Feishu and SNS not again.
    expect(sent).toEqual({ slack: 2, feishu: 1, sns: 1 });
  });
});
