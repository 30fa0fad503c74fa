/**
 * DynamoDB requests per alert, counted at the AWS SDK's middleware level (every command the client
 * sends, retries excluded): the real app in process (same settings as the spawned product) on dynalite,
 * twice — as on a shared table (DynamoDB, or any table other processes write: one conditional write
 * per claim and per record), and as on `npm start`'s embedded store, which this process alone writes
 * (claims and records batched under in-process locks, `shared/store/start-many.ts`).
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

/** Write operations, whose capacity {@link countWriteUnits} adds up. */
const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand', 'TransactWriteItemsCommand']);

/**
 * Adds up the write capacity units (WCU) of every write `client` sends, as the table reports them
 * (`ReturnConsumedCapacity: TOTAL`, set on each write here): dynalite counts 1 per KB of the item
 * (the larger of before and after), the transaction emulation 2 (`dynalite-transactions.ts`), as DynamoDB charges.
 */
export function countWriteUnits(client: DynamoDBClient): Map<string, number> {
  const units = new Map<string, number>();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (!WRITES.has(context.commandName ?? '')) return next(args);
      const out = await next({ ...args, input: { ...(args.input as object), ReturnConsumedCapacity: 'TOTAL' } });
      const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | { CapacityUnits?: number }[] }).ConsumedCapacity;
      const name = context.commandName!;
      for (const c of [consumed ?? []].flat()) units.set(name, (units.get(name) ?? 0) + (c.CapacityUnits ?? 0));
      return out;
    },
    { step: 'initialize', name: 'benchCountWriteUnits' },
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
  /** Requests of the new group by command, e.g. `PutItem 100`. */
  newBreakdown: string;
  duplicateBreakdown: string;
}

/**
 * Sends a group of `n` new alerts, then the same group again; counts the store's requests of each.
 * @param exclusive as the embedded store (this process the table's only writer); false: as DynamoDB
 */
export async function storeCost(fakes: Fakes, sizes: number[], exclusive = false): Promise<StoreCost[]> {
  const db = await startLocalDynamoDb('bench-floor');
  const sns = new SNSClient({ endpoint: fakes.sns.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } });
  try {
    const counts = countCommands(db.client);
    const wcu = countWriteUnits(db.client);
    const config = loadConfig({ ...productEnv(fakes), ALLOW_UNAUTHENTICATED: 'true', TABLE_NAME: 'bench-floor' });
    const app = createApp(config, createDeps(config, { dynamodb: db.client, exclusiveTable: exclusive, sns }, silentLogger));
    const send = async (body: string) => {
      counts.clear();
      wcu.clear();
      const res = await app.request('/v1/alertmanager', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      if (res.status !== 200) throw new Error(`store cost: answer ${res.status} ${await res.text()}`);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      const units = [...wcu.values()].reduce((a, b) => a + b, 0);
      const breakdown = [...counts].map(([c, n]) => `${c.replace(/Command$/, '')} ${n}${wcu.has(c) ? ` (${wcu.get(c)} WCU)` : ''}`).join(', ');
      return { total, units, breakdown };
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
 * What the counts show, for the benchmark's output: the floor of a conditional claim per new alert and
 * the records in transactions, and how far a 100-alert group is from it.
 */
export function storeFindings(shared: StoreCost[], embedded: StoreCost[]): string {
  const hundred = shared.find((c) => c.alerts === 100);
  const local = embedded.find((c) => c.alerts === 100);
  const floor = 1 + 1 / 100 + 1 / 100 + 1 / 100;
  return [
    '\nFound (store): on a shared table (DynamoDB) a new alert costs its conditional claim (PutItem) and, once every channel accepted it, its',
    'alert record write, which carries the delivery mark (the dedupe ledger reads the head as delivered), its flap run and its `notified`',
    "history event. A group's new records go in TransactWriteItems of up to 100 (shared/store/record-transactions.ts): each action the record",
    "write, conditioned on the record being absent or expired; one whose record exists (a known alert's new occurrence, an HA peer's or an",
    'acknowledged record written since the read) is cancelled and goes alone as before, the others in one more transaction. Per group, one',
    "BatchGetItem per 100 heads (what makes a duplicate cost no write) and one PutItem for a storm digest's alert set (written before sending,",
    `so that its link works): ${round(floor)} per new alert for 100 alerts${hundred ? `; measured ${round(hundred.perNew)}` : ''}. The claims stay single conditional`,
    "PutItems: HA peers race on exactly them, and in a transaction one lost claim would cancel the group's others. The price: a transactional",
    `write costs 2 write units per KB, not 1${hundred ? ` (${round(hundred.wcuPerNew)} WCU per new alert, 100 alerts)` : ''}; dynalite has no transactions, the tests and this`,
    'bench run them through shared/store/dynalite-transactions.ts.',
    `The embedded store of npm start (this process its only writer) batches claims and records under in-process key locks${local ? `: ${round(local.perNew)} per new alert, ${round(local.wcuPerNew)} WCU` : ''}.`,
  ].join('\n');
}
