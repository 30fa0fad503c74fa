/**
 * DynamoDB's capacity units of a scenario, as the table reports them (`ReturnConsumedCapacity: TOTAL`, added by the
 * bench's AWS SDK middleware `countUnits`, `bench/floor-store.ts`): the app in this process, wired as the receiver
 * Lambda wires it (no in-process timers), on its own table of the out-of-process store. The Lambda bundle's own SDK
 * is out of the bench's reach, and a proxy that added the parameter on the wire made the store too slow for a storm.
 */
import { type AttributeValue, DynamoDBClient, paginateScan } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { silentLogger } from '../shared/core/logger.js';
import { createApp } from '../shared/http/app.js';
import { loadConfig } from '../shared/runtime/config.js';
import { createDeps } from '../shared/runtime/deps.js';
import { ensureTable } from '../shared/store/table.js';
import { productEnv, type Fakes } from './floor-fakes.js';
import { countUnits } from './floor-store.js';

const CREDENTIALS = { accessKeyId: 'bench', secretAccessKey: 'bench' };

export interface UnitCounter {
  /** Posts the bodies in order. @returns the read and write units they consumed, and any answer not 200 */
  spend(bodies: string[]): Promise<{ rcu: number; wcu: number; refused: number[] }>;
  /** The size of every item of the table as DynamoDB bills it, bytes, by key space (`alert`, `event`, `history`…). */
  itemSizes(): Promise<Map<string, number[]>>;
  close(): void;
}

/** @param storeUrl the out-of-process store; `tableName` is created there */
export async function unitCounter(fakes: Fakes, storeUrl: string, tableName: string): Promise<UnitCounter> {
  const dynamodb = new DynamoDBClient({ endpoint: storeUrl, region: 'eu-west-1', credentials: CREDENTIALS });
  const sns = new SNSClient({ endpoint: fakes.sns.endpoint, region: 'eu-west-1', credentials: CREDENTIALS });
  await ensureTable(dynamodb, tableName);
  const rcu = countUnits(dynamodb, 'read');
  const wcu = countUnits(dynamodb, 'write');
  const config = loadConfig({ ...productEnv(fakes), ALLOW_UNAUTHENTICATED: 'true', TABLE_NAME: tableName });
  const app = createApp(config, createDeps(config, { dynamodb, sns, inProcessTimers: false }, silentLogger));
  const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  return {
    spend: async (bodies) => {
      rcu.clear();
      wcu.clear();
      const refused: number[] = [];
      for (const body of bodies) {
        const res = await app.request('/v1/alertmanager', {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        });
        await res.arrayBuffer();
        if (res.status !== 200) refused.push(res.status);
      }
      return { rcu: sum(rcu), wcu: sum(wcu), refused };
    },
    itemSizes: async () => {
      const sizes = new Map<string, number[]>();
      for await (const page of paginateScan({ client: dynamodb }, { TableName: tableName, ConsistentRead: true }))
        for (const item of page.Items ?? []) {
          const space = String(item.pk?.S).split('#')[0]!;
          sizes.set(space, [...(sizes.get(space) ?? []), itemSize(item)]);
        }
      return sizes;
    },
    close: () => {
      dynamodb.destroy();
      sns.destroy();
    },
  };
}

/**
 * An item's size as DynamoDB counts it for capacity units: per attribute, its name's UTF-8 bytes and its value's
 * (a string its UTF-8 bytes, a number about 1 byte per 2 digits plus 1, a map or list 3 bytes plus 1 per element
 * plus its elements, a set the sum of its elements, a boolean or null 1 byte).
 * @see https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
 */
export function itemSize(item: Record<string, AttributeValue>): number {
  return Object.entries(item).reduce((n, [name, value]) => n + Buffer.byteLength(name) + valueSize(value), 0);
}

function valueSize(v: AttributeValue): number {
  const bytes = (s: string) => Buffer.byteLength(s);
  const number = (s: string) => Math.ceil(s.replace(/^-|\.|^0+/g, '').length / 2) + 1;
  if (v.S !== undefined) return bytes(v.S);
  if (v.N !== undefined) return number(v.N);
  if (v.B !== undefined) return v.B.length;
  if (v.SS) return v.SS.reduce((n, s) => n + bytes(s), 0);
  if (v.NS) return v.NS.reduce((n, s) => n + number(s), 0);
  if (v.M) return 3 + Object.entries(v.M).reduce((n, [k, x]) => n + 1 + bytes(k) + valueSize(x), 0);
  if (v.L) return 3 + v.L.reduce((n, x) => n + 1 + valueSize(x), 0);
  return 1;
}
