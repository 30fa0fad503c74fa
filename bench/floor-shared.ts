/**
 * The shared-table path, as AWS users run it: the receiver's Lambda bundle (built with the construct's esbuild
 * settings, `bench/lambda-server.mjs` turning each post into a Function URL event) with its store in another
 * process over loopback (`bench/dynalite-server.mjs`: DynamoDB's semantics, no in-process shortcut), against two
 * baselines in the same run, posts interleaved: the bare relay (`relay.mjs`) and the dedupe relay
 * (`dedupe-relay.mjs`: the bare relay plus one batched read per group and one conditional write per new alert,
 * the same SDK, the same store). Then DynamoDB's capacity units per new alert and per duplicate on that path, as
 * the table reports them (`ReturnConsumedCapacity: TOTAL`, added by an SDK middleware of the bench).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { functionUrlEvent } from '../scripts/lambda-local.js';
import { ensureTable } from '../shared/store/table.js';
import { bundle } from './floor-build.js';
import { productEnv, type Fakes } from './floor-fakes.js';
import { newGroup, post, ROOT, serve, type Served } from './floor-processes.js';
import { storeCost, type StoreCost } from './floor-store.js';
import { round, table, type Row } from './harness.js';

/** Cases: alerts per group, posts measured (medians of these), goal ratio to the dedupe relay. */
export interface SharedCases {
  groups: ReadonlyArray<[alerts: number, runs: number, goal: number]>;
  duplicateRuns: number;
  warmupPosts: number;
}

const SHARED_GOALS = { duplicate: 1.2, wcuPerNew: 4, unitsPerDuplicate: 0.5 } as const;

export const TABLE = 'bench-shared';
const TOKEN = 'bench-token-0123456789';
export const AWS = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench' };

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const met = (ok: boolean) => (ok ? 'met' : 'NOT MET');

function ok(r: { status: number }, what: string): void {
  if (r.status !== 200) throw new Error(`${what}: answered ${r.status}`);
}

/** The three servers of one case, posted to in this order each round. */
interface Contenders {
  receiver: Served;
  dedupe: Served;
  relay: Served;
}

/** `runs` rounds, each posting a body to the receiver, the dedupe relay, the relay in turn. @returns their ms */
async function rounds(
  servers: Contenders,
  runs: number,
  bodies: () => [string, string, string],
): Promise<[number[], number[], number[]]> {
  const times: [number[], number[], number[]] = [[], [], []];
  const order = [servers.receiver, servers.dedupe, servers.relay];
  for (let i = 0; i < runs; i++) {
    const sent = bodies();
    for (const [k, server] of order.entries()) {
      const r = await post(server.url, sent[k]!);
      ok(r, `shared path, ${['receiver', 'dedupe relay', 'relay'][k]}`);
      times[k]!.push(r.ms);
    }
  }
  return times;
}

/** Medians of `runs` interleaved rounds after two unmeasured ones: receiver, dedupe relay, relay, ms. */
async function measure(servers: Contenders, runs: number, bodies: () => [string, string, string]): Promise<number[]> {
  await rounds(servers, 2, bodies);
  return (await rounds(servers, runs, bodies)).map(median);
}

function latencyRow(label: string, [p, d, r]: number[], goal: number): Row {
  return {
    case: `${label}, shared path`,
    'product p50': `${round(p!)} ms`,
    'dedupe relay p50': `${round(d!)} ms`,
    'relay p50': `${round(r!)} ms`,
    'product/dedupe relay': `${round(p! / d!)}×`,
    goal: `≤ ${goal}×`,
    status: met(p! / d! <= goal),
    'product/relay': `${round(p! / r!)}×`,
  };
}

/** Starts the receiver bundle on a loopback port, wired to the fakes and the store at `storeUrl`. */
export async function startReceiver(fakes: Fakes, storeUrl: string): Promise<Served> {
  const receiver = await bundle('receiver-shared', 'functions/lambda.ts', 'bundled');
  return serve([`${ROOT}bench/lambda-server.mjs`], {
    ...productEnv(fakes),
    AWS_LAMBDA_FUNCTION_NAME: 'receiver',
    TABLE_NAME: TABLE,
    AWS_ENDPOINT_URL_DYNAMODB: storeUrl,
    WEBHOOK_TOKEN: TOKEN,
    LAMBDA_BUNDLE: receiver.file,
    LAMBDA_EVENT: JSON.stringify(functionUrlEvent('', { authorization: `Bearer ${TOKEN}` })),
  });
}

/**
 * The shared-path goal rows (latency against the dedupe relay; units per new alert and per duplicate) and the
 * details for the notes.
 */
export async function sharedPath(
  fakes: Fakes,
  relay: Served,
  cases: SharedCases,
): Promise<{ rows: Row[]; notes: string[] }> {
  const store = await serve([`${ROOT}bench/dynalite-server.mjs`], {});
  const client = new DynamoDBClient({
    endpoint: store.url,
    region: AWS.AWS_REGION,
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  const started: Served[] = [store];
  try {
    await ensureTable(client, TABLE);
    const receiver = await startReceiver(fakes, store.url);
    started.push(receiver);
    const dedupe = await serve([`${ROOT}bench/dedupe-relay.mjs`], {
      ...AWS,
      TABLE_NAME: TABLE,
      AWS_ENDPOINT_URL_DYNAMODB: store.url,
      SLACK_WEBHOOK_URL: `${fakes.url}/slack/dedupe-relay`,
    });
    started.push(dedupe);
    const servers = { receiver, dedupe, relay };
    const fresh = (n: number) => (): [string, string, string] => [newGroup(n), newGroup(n), newGroup(n)];
    // All warm first (JIT, connection pools): otherwise the relays' first posts count against them.
    for (let i = 0; i < cases.warmupPosts; i++) await rounds(servers, 1, fresh(1 + (i % 10)));
    const rows: Row[] = [];
    for (const [n, runs, goal] of cases.groups) {
      rows.push(
        latencyRow(`${n} new alert${n > 1 ? 's' : ''} per group`, await measure(servers, runs, fresh(n)), goal),
      );
      console.error(`  measured: shared path, ${n} new`);
    }
    const dup = newGroup(10);
    await rounds(servers, 1, () => [dup, dup, dup]);
    rows.push(
      latencyRow(
        '10 duplicate alerts',
        await measure(servers, cases.duplicateRuns, () => [dup, dup, dup]),
        SHARED_GOALS.duplicate,
      ),
    );
    const relayUnits = await dedupeRelayUnits(dedupe);
    const cost = await storeCost(fakes, [1, 10, 100], { client, tableName: TABLE });
    rows.push(...unitRows(cost));
    return { rows, notes: [unitNotes(cost, relayUnits)] };
  } finally {
    client.destroy();
    for (const s of started.reverse()) await s.stop();
  }
}

interface Units {
  rcu: number;
  wcu: number;
}

/** The dedupe relay's units per new alert (a 100-alert group) and per duplicate (it again). */
async function dedupeRelayUnits(dedupe: Served): Promise<{ perNew: Units; perDuplicate: Units }> {
  const units = async () => (await (await fetch(`${dedupe.url}/units`)).json()) as Units;
  const per = (a: Units, b: Units, n: number) => ({ rcu: (b.rcu - a.rcu) / n, wcu: (b.wcu - a.wcu) / n });
  const body = newGroup(100);
  const before = await units();
  ok(await post(dedupe.url, body), 'dedupe relay units');
  const between = await units();
  ok(await post(dedupe.url, body), 'dedupe relay units (again)');
  return { perNew: per(before, between, 100), perDuplicate: per(between, await units(), 100) };
}

/** The two capacity goal rows: write units per new alert (100-alert group), units per duplicate (10-alert group). */
function unitRows(cost: StoreCost[]): Row[] {
  const c100 = cost.find((c) => c.alerts === 100)!;
  const c10 = cost.find((c) => c.alerts === 10)!;
  const dupUnits = c10.rcuPerDuplicate + c10.wcuPerDuplicate;
  return [
    {
      case: 'DynamoDB write units per new alert (100-alert group), shared path',
      'product p50': `${round(c100.wcuPerNew)} WCU (+ ${round(c100.rcuPerNew)} RCU)`,
      goal: `≤ ${SHARED_GOALS.wcuPerNew}`,
      status: met(c100.wcuPerNew <= SHARED_GOALS.wcuPerNew),
    },
    {
      case: 'DynamoDB read + write units per duplicate (10-alert group), shared path',
      'product p50': `${round(dupUnits)} (${round(c10.rcuPerDuplicate)} RCU + ${round(c10.wcuPerDuplicate)} WCU)`,
      goal: `≤ ${SHARED_GOALS.unitsPerDuplicate}`,
      status: met(dupUnits <= SHARED_GOALS.unitsPerDuplicate),
    },
  ];
}

function unitNotes(cost: StoreCost[], relay: { perNew: Units; perDuplicate: Units }): string {
  const dup = cost.find((c) => c.alerts === 10)!.rcuPerDuplicate;
  const rows = cost.map((c) => ({
    alerts: c.alerts,
    'WCU / RCU per new alert': `${round(c.wcuPerNew)} / ${round(c.rcuPerNew)}`,
    'WCU / RCU per duplicate': `${round(c.wcuPerDuplicate)} / ${round(c.rcuPerDuplicate)}`,
    'requests per new / per duplicate': `${round(c.perNew)} / ${round(c.perDuplicate)}`,
    'new group': c.newBreakdown,
    'same group again': c.duplicateBreakdown,
  }));
  return (
    '\n### DynamoDB capacity units on the shared path (the app as the receiver Lambda wires it, its store in another ' +
    `process; ReturnConsumedCapacity TOTAL read by an SDK middleware)\n\n${table(rows)}\n\n` +
    `The dedupe relay (one eventually consistent read per alert, one conditional write per new alert, items under 1 KB), 100 alerts: ` +
    `${round(relay.perNew.wcu)} WCU + ${round(relay.perNew.rcu)} RCU per new alert, ` +
    `${round(relay.perDuplicate.wcu)} WCU + ${round(relay.perDuplicate.rcu)} RCU per duplicate. On demand, DynamoDB ` +
    'charges a strongly consistent read 1 RCU per item up to 4 KB, found or not (0.5 eventually consistent), whatever ' +
    'the projection; a write 1 WCU per KB of the larger of the item before and after.' +
    `\nWhat stands in the way of the duplicate goal: a duplicate's BatchGetItem reads two items, its head and its ` +
    `alert record, eventually consistent: ${round(dup)} RCU, where the dedupe relay reads one item ` +
    `(${round(relay.perDuplicate.rcu)} RCU); ≤ 0.5 is one item per duplicate. A duplicate needs the record's ` +
    "delivery mark and its acknowledgement's silence end, which no write of the head carries: a new alert costs " +
    'one write after delivery, not two (a head written on delivery: +1 WCU per new alert, over the goal of 4); one ' +
    'item would take the ledger and the record in one item, a new layout of the table (docs/performance.md).'
  );
}
