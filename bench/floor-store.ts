/**
 * DynamoDB requests per alert, counted at the AWS SDK's middleware level (every command the client
 * sends, retries excluded): the real app in process (same settings as the spawned product) on dynalite.
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

export interface StoreCost {
  alerts: number;
  /** Requests per alert for a new group, and for the same group sent again (all duplicates). */
  perNew: number;
  perDuplicate: number;
  /** Requests of the new group by command, e.g. `PutItem 100`. */
  newBreakdown: string;
  duplicateBreakdown: string;
}

/** Sends a group of `n` new alerts, then the same group again; counts the store's requests of each. */
export async function storeCost(fakes: Fakes, sizes: number[]): Promise<StoreCost[]> {
  const db = await startLocalDynamoDb('bench-floor');
  const sns = new SNSClient({ endpoint: fakes.sns.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' } });
  try {
    const counts = countCommands(db.client);
    const config = loadConfig({ ...productEnv(fakes), ALLOW_UNAUTHENTICATED: 'true', TABLE_NAME: 'bench-floor' });
    const app = createApp(config, createDeps(config, { dynamodb: db.client, sns }, silentLogger));
    const send = async (body: string) => {
      counts.clear();
      const res = await app.request('/v1/alertmanager', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
      if (res.status !== 200) throw new Error(`store cost: answer ${res.status} ${await res.text()}`);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      return { total, breakdown: [...counts].map(([c, n]) => `${c.replace(/Command$/, '')} ${n}`).join(', ') };
    };
    const rows: StoreCost[] = [];
    for (const n of sizes) {
      const body = newGroup(n);
      const first = await send(body);
      const again = await send(body);
      rows.push({ alerts: n, perNew: first.total / n, perDuplicate: again.total / n, newBreakdown: first.breakdown, duplicateBreakdown: again.breakdown });
    }
    return rows;
  } finally {
    sns.destroy();
    await db.close();
  }
}

/**
 * What the counts show, for the benchmark's output: the floor of single-item conditional writes
 * (dynalite has no `TransactWriteItems`), and how far a 100-alert group is above it.
 */
export function storeFindings(cost: StoreCost[]): string {
  const hundred = cost.find((c) => c.alerts === 100);
  const floor = 2 + 3 / 100 + 4 / 100;
  return [
    '\nFound (store): a new alert costs its conditional claim (PutItem) and, once every channel accepted it, one UpdateItem — its alert record, which',
    'carries the delivery mark (the dedupe ledger reads the head as delivered) and its flap run; per group, one BatchGetItem per 33 alerts',
    '(head, legacy resolve item, alert record) and one BatchWriteItem per 25 history events. Without transactions that is',
    `${round(floor)} per new alert for 100 alerts (2 writes + 3/100 reads + 4/100 history batches)${hundred ? `; measured ${round(hundred.perNew)}` : ''}:`,
    '≤ 2 would need a write batched across alerts, which only TransactWriteItems can do with conditions.',
  ].join('\n');
}
