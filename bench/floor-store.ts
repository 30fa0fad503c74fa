/**
 * DynamoDB requests and write units per alert, counted at the AWS SDK's middleware level (every command
 * the client sends, retries excluded): the real app in process (same settings as the spawned product) on
 * dynalite, whose single-item conditional writes are the same in Lambda and under `npm start`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { createApp } from '../shared/http/app.js';
import { loadConfig } from '../shared/runtime/config.js';
import { startLocalDynamoDb } from '../shared/store/local-dynamodb.js';
import { silentLogger } from '../shared/core/logger.js';
import { createDeps } from '../shared/runtime/deps.js';
import type { Fakes } from './floor-fakes.js';
import { round } from './harness.js';
import { productEnv } from './floor-fakes.js';
import { newGroup } from './floor-processes.js';

/** Counts every command `client` sends, by command name. */
export function countCommands(client: DynamoDBClient): Map<string, number> {
  const counts = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => (args) => {
      counts.set(context.commandName ?? '?', (counts.get(context.commandName ?? '?') ?? 0) + 1);
      return next(args);
    },
    { step: 'initialize', name: 'benchCountCommands' },
  );
  return counts;
}

/** Write operations, whose capacity {@link countUnits} adds up as write units. */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand']);
/** Read operations, whose capacity {@link countUnits} adds up as read units. */
const READS = new Set(['GetItemCommand', 'BatchGetItemCommand', 'QueryCommand', 'ScanCommand']);

/**
 * Adds up the capacity units of every write (WCU) or every read (RCU) `client` sends, by command, as the table
 * reports them (`ReturnConsumedCapacity: TOTAL`, set on each such request here; it changes only the answer):
 * dynalite counts, as DynamoDB charges on demand, 1 WCU per KB written (the larger of the item before and after)
 * and 1 RCU per 4 KB read strongly consistently (0.5 eventually).
 */
export function countUnits(client: DynamoDBClient, kind: 'write' | 'read' = 'write'): Map<string, number> {
  const units = new Map<string, number>();
  const commands = kind === 'write' ? WRITES : READS;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!commands.has(context.commandName ?? '')) return next(args);
      const out = await next({ ...args, input: { ...(args.input as object), ReturnConsumedCapacity: 'TOTAL' } });
      const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] })
        .ConsumedCapacity;
      const name = context.commandName!;
      for (const c of [consumed ?? []].flat()) units.set(name, (units.get(name) ?? 0) + (c.CapacityUnits ?? 0));
      return out;
    },
    { step: 'initialize', name: `benchCount${kind}Units` },
  );
  return units;
}

export interface StoreCost {
  alerts: number;
  /** Requests per alert for a new group, and for the same group sent again (all duplicates). */
  perNew: number;
  perDuplicate: number;
  /** Write capacity units per alert of the new group (DynamoDB's on-demand price is per unit, not per request). */
  wcuPerNew: number;
  /** Read capacity units per alert of the new group. */
  rcuPerNew: number;
  /** Read and write capacity units per alert of the same group sent again. */
  rcuPerDuplicate: number;
  wcuPerDuplicate: number;
  /** Requests of the new group by command, e.g. `PutItem 100`. */
  newBreakdown: string;
  duplicateBreakdown: string;
}

/** A store in another process (the shared-table path): a client to it, and the table the app uses there. */
export interface SharedStore {
  client: DynamoDBClient;
  tableName: string;
}

/**
 * Sends a group of `n` new alerts, then the same group again; counts the store's requests and units of each.
 * @param store the store to use, and then the app is wired as the receiver Lambda wires it (no in-process timers);
 *   default: `npm start`'s embedded dynalite (in process, over loopback HTTP)
 */
export async function storeCost(fakes: Fakes, sizes: number[], store?: SharedStore): Promise<StoreCost[]> {
  const db = store
    ? { client: store.client, tableName: store.tableName, close: async () => {} }
    : { ...(await startLocalDynamoDb('bench-floor')), tableName: 'bench-floor' };
  const sns = new SNSClient({
    endpoint: fakes.sns.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
  });
  try {
    const counts = countCommands(db.client);
    const wcu = countUnits(db.client, 'write');
    const rcu = countUnits(db.client, 'read');
    const config = loadConfig({ ...productEnv(fakes), ALLOW_UNAUTHENTICATED: 'true', TABLE_NAME: db.tableName });
    const clients = { dynamodb: db.client, sns, ...(store && { inProcessTimers: false }) };
    const app = createApp(config, createDeps(config, clients, silentLogger));
    const send = async (body: string) => {
      counts.clear();
      wcu.clear();
      rcu.clear();
      const res = await app.request('/v1/alertmanager', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      if (res.status !== 200) throw new Error(`store cost: answer ${res.status} ${await res.text()}`);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const units = [...wcu.values()].reduce((a, b) => a + b, 0);
      const readUnits = [...rcu.values()].reduce((a, b) => a + b, 0);
      const breakdown = [...counts]
        .map(([c, n]) => {
          const units = [wcu.has(c) && `${wcu.get(c)} WCU`, rcu.has(c) && `${rcu.get(c)} RCU`].filter(Boolean);
          return `${c.replace(/Command$/, '')} ${n}${units.length ? ` (${units.join(', ')})` : ''}`;
        })
        .join(', ');
      return { total, units, readUnits, breakdown };
    };
    const rows: StoreCost[] = [];
    for (const n of sizes) {
      const body = newGroup(n);
      const first = await send(body);
      const again = await send(body);
      rows.push({
        alerts: n,
        perNew: first.total / n,
        perDuplicate: again.total / n,
        wcuPerNew: first.units / n,
        rcuPerNew: first.readUnits / n,
        rcuPerDuplicate: again.readUnits / n,
        wcuPerDuplicate: again.units / n,
        newBreakdown: `${first.breakdown}; ${round(first.units / n)} WCU per alert`,
        duplicateBreakdown: again.breakdown,
      });
    }
    return rows;
  } finally {
    sns.destroy();
    await db.close();
  }
}

/**
 * What the counts show, for the benchmark's output: the floor of one conditional write per new alert for
 * its claim and one for its record, and how far a 100-alert group is from it.
 */
export function storeFindings(costs: StoreCost[]): string {
  const hundred = costs.find((c) => c.alerts === 100);
  const floor = 2 + 1 / 100 + 1 / 100;
  return [
    '\nStore: a new alert costs its conditional claim (PutItem) and, once every channel accepted it, its alert record',
    'write (UpdateItem), which carries the delivery mark (the dedupe ledger reads the head as delivered), its flap run and its',
    '`notified` history event. Per group, one BatchGetItem per 50 alerts (heads and records: what makes a duplicate cost no write)',
    "and one PutItem for a storm digest's alert set (written before sending, so that its link works):",
    `${round(floor)} requests per new alert for 100 alerts${hundred ? `; measured ${round(hundred.perNew)}, ${round(hundred.wcuPerNew)} WCU` : ''}.`,
    'Every write is a single-item conditional write, the same on DynamoDB and on the embedded dynalite of npm start.',
  ].join('\n');
}
