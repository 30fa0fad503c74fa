/**
 * What a user pays per 1,000 alerts on the shared-table path, in the units AWS bills, for the traffic of
 * `bench/cost-scenarios.ts`: the receiver's Lambda bundle with its store in another process (`bench/lambda-server.mjs`:
 * billed duration, the handler's call to its answer rounded up to the ms, as Lambda bills CPU and wait alike);
 * Prometheus HTTP requests and platform messages from the loopback stand-ins; DynamoDB's read and write units of the
 * same bodies from `bench/cost-units.ts`. Priced with AWS's published on-demand prices (`bench/cost-table.ts`).
 * The same bodies go to the dedupe relay (its own units: the baseline). The storm's first post is also timed:
 * first answer and digests out, against the Lambda's time-out.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unitCounter, type UnitCounter } from './cost-units.js';
import { RECEIVER_TIMEOUT_SECONDS } from '../infra/receiver.js';
import { ensureTable } from '../shared/store/table.js';
import { flapping, steadyState, storm, type Scenario } from './cost-scenarios.js';
import type { Fakes } from './floor-fakes.js';
import { post, ROOT, serve, type Served } from './floor-processes.js';
import { AWS, startReceiver, TABLE } from './floor-shared.js';
import { costNotes, sizeNote, type Billed, type Spent, type Units } from './cost-table.js';
import { round, type Row } from './harness.js';

const STORM_GOALS = { answerMs: 8000, digestsMs: 3000 } as const;
const BENCH_CREDENTIALS = { accessKeyId: 'bench', secretAccessKey: 'bench' };
/** The table of the in-process count of units (the receiver's items are in `TABLE`). */
const UNITS_TABLE = 'bench-cost-units';

const getJson = async <T>(url: string): Promise<T> => (await (await fetch(url)).json()) as T;
const minus = <T extends Record<string, number>>(a: T, b: T): T =>
  Object.fromEntries(Object.keys(a).map((k) => [k, a[k]! - b[k]!])) as T;

/** How the storm's first post went: its answer, ms from the post, and when the digests were out. */
interface StormTiming {
  answerMs: number;
  /** When the last Slack or Feishu message and the first SNS publish arrived, ms from the post. */
  digestsMs: number;
  status: number;
  /** The answer's `error`, when not 200. */
  error?: string;
}

/** The storm's first post to the receiver, timed. */
async function timedStorm(fakes: Fakes, receiver: Served, body: string): Promise<StormTiming> {
  let snsAt = 0;
  const started = performance.now();
  const poll = setInterval(() => void (fakes.sns.publishes.length && !snsAt && (snsAt = performance.now())), 2);
  const res = await fetch(`${receiver.url}/v1/alertmanager`, {
    method: 'POST',
    body,
    headers: { 'content-type': 'application/json' },
  });
  const text = await res.text();
  const answerMs = performance.now() - started;
  clearInterval(poll);
  const digestsMs = Math.max(fakes.lastMessageAt(), snsAt || performance.now()) - started;
  const error = res.status === 200 ? undefined : String((JSON.parse(text) as { error?: unknown }).error ?? text);
  return { answerMs, digestsMs, status: res.status, ...(error && { error }) };
}

interface World {
  fakes: Fakes;
  receiver: Served;
  units: UnitCounter;
  dedupe: Served;
}

/**
 * Posts a scenario's bodies to the receiver (`onFirst` times the first post instead), then counts their units in
 * process, then posts them to the dedupe relay.
 */
async function spend(w: World, scenario: Scenario, onFirst?: (body: string) => Promise<void>): Promise<Spent> {
  w.fakes.reset();
  const [billed0, relay0] = await Promise.all([
    getJson<Billed>(`${w.receiver.url}/bench/billed`),
    getJson<Units>(`${w.dedupe.url}/units`),
  ]);
  const refused: number[] = [];
  for (const [i, body] of scenario.bodies.entries()) {
    if (i === 0 && onFirst) await onFirst(body);
    else {
      const { status } = await post(w.receiver.url, body);
      if (status !== 200) refused.push(status);
    }
  }
  const c = w.fakes.counts();
  const billed = { ...minus(await getJson<Billed>(`${w.receiver.url}/bench/billed`), billed0), initMs: billed0.initMs };
  const units = await w.units.spend(scenario.bodies);
  for (const body of scenario.bodies) await post(w.dedupe.url, body);
  return {
    scenario,
    rcu: units.rcu,
    wcu: units.wcu,
    billed,
    prometheus: c.prometheus,
    messages: { slack: c.slack, feishu: c.feishu, sns: c.sns },
    relay: minus(await getJson<Units>(`${w.dedupe.url}/units`), relay0),
    refused: [...refused, ...units.refused],
  };
}

/** The storm's goal row and, when a goal is not met, the bound that stands in the way. */
function stormRows(s: Spent, t: StormTiming, relayMs: number): Row[] {
  const ok = t.status === 200 && t.answerMs <= STORM_GOALS.answerMs && t.digestsMs <= STORM_GOALS.digestsMs;
  const timeout = Math.round((t.answerMs / 1000 / RECEIVER_TIMEOUT_SECONDS) * 100);
  const answered = t.status === 200 ? '' : `, answered ${t.status} (${t.error})`;
  const rows: Row[] = [
    {
      case: `${s.scenario.name} (+ truncated), shared path: first answer / digests out`,
      'product p50': `${round(t.answerMs / 1000)} s / ${round(t.digestsMs / 1000)} s (${timeout}% of the ${RECEIVER_TIMEOUT_SECONDS} s time-out${answered})`,
      'dedupe relay p50': `${round(relayMs / 1000)} s`,
      'product/dedupe relay': `${round(t.answerMs / relayMs)}×`,
      goal: `≤ ${STORM_GOALS.answerMs / 1000} s / ≤ ${STORM_GOALS.digestsMs / 1000} s`,
      status: ok ? 'met' : 'NOT MET',
    },
  ];
  if (!ok)
    rows.push({
      case: '  bound: what stands in the way',
      'product p50':
        `the store: the storm and its HA copy cost ${round(s.wcu)} WCU and ${round(s.rcu)} RCU (one conditional ` +
        `write per alert for its claim, one for its record), up to 64 requests in flight to one dynalite process ` +
        `(each with the SDK's 3 s request time-out); the dedupe relay's claims alone (one read per 100 alerts, one ` +
        `conditional write per alert, the same SDK and store) take ${round(relayMs / 1000)} s`,
    });
  return rows;
}

/** The dedupe relay's time for one body, ms (its store items differ from the receiver's: a fresh claim each). */
async function relayTime(dedupe: Served, body: string): Promise<number> {
  const fresh = body.replaceAll('"fingerprint":"', '"fingerprint":"r');
  return (await post(dedupe.url, fresh)).ms;
}

/** The cost rows (goal table) and the cost table (notes), one run of each scenario. */
export async function costPath(fakes: Fakes, quick: boolean): Promise<{ rows: Row[]; notes: string[] }> {
  const started: Served[] = [];
  let units: UnitCounter | undefined;
  try {
    const store = await serve([`${ROOT}bench/dynalite-server.mjs`], {});
    started.push(store);
    const db = new DynamoDBClient({ endpoint: store.url, region: AWS.AWS_REGION, credentials: BENCH_CREDENTIALS });
    await ensureTable(db, TABLE).finally(() => db.destroy());
    const receiver = await startReceiver(fakes, store.url);
    started.push(receiver);
    const dedupe = await serve([`${ROOT}bench/dedupe-relay.mjs`], {
      ...AWS,
      TABLE_NAME: TABLE,
      AWS_ENDPOINT_URL_DYNAMODB: store.url,
      SLACK_WEBHOOK_URL: `${fakes.url}/slack/dedupe-relay`,
    });
    started.push(dedupe);
    units = await unitCounter(fakes, store.url, UNITS_TABLE);
    const w = { fakes, receiver, units, dedupe };
    const spent = [await spend(w, steadyState(quick ? 2 : 10)), await spend(w, flapping(quick ? 5 : 25))];
    const big = storm(quick ? 500 : 5000, quick ? 150 : 1497);
    const relayMs = await relayTime(dedupe, big.bodies[0]!);
    let timing: StormTiming = { answerMs: 0, digestsMs: 0, status: 0 };
    spent.push(await spend(w, big, async (body) => void (timing = await timedStorm(fakes, receiver, body))));
    console.error('  measured: cost per 1,000 alerts');
    const sizes = sizeNote(await units.itemSizes());
    return { rows: stormRows(spent[2]!, timing, relayMs), notes: [costNotes(spent), sizes] };
  } finally {
    units?.close();
    for (const s of started.reverse()) await s.stop();
  }
}
