/**
 * `transactUpdates` alone, against a stub DocumentClient: the size of each transaction as DynamoDB counts it
 * (UTF-8 bytes of the values; it refuses a transaction over 4 MB), and one chunk's failure leaving the
 * other chunks' answers standing.
 */
import { describe, expect, it } from 'vitest';
import { type TransactUpdate, transactUpdates } from '../../../shared/store/record-transactions.js';

type Sent = { input: { TransactItems: { Update: TransactUpdate }[] } };
const update = (i: number, value: string): TransactUpdate => ({
  TableName: 't',
  Key: { pk: `a${i}` },
  UpdateExpression: 'SET #a = :va',
  ExpressionAttributeNames: { '#a': 'alertJson' },
  ExpressionAttributeValues: { ':va': value },
});

describe('transactUpdates', () => {
  it('keeps each transaction under 4 MB of UTF-8, whatever the characters (a CJK character is 3 bytes)', async () => {
    const sizes: number[] = [];
    const doc = { send: async (cmd: Sent) => void sizes.push(cmd.input.TransactItems.reduce((s, a) => s + Buffer.byteLength(JSON.stringify(a.Update.ExpressionAttributeValues)), 0)) };
    // 30 records of ~250 KB of UTF-8 each (~85,000 CJK characters: within a record's 256 KB).
    const applied = await transactUpdates(
      doc as never,
      Array.from({ length: 30 }, (_, i) => update(i, '内存告警'.repeat(21_000))),
      { supported: true },
      () => {},
    );
    expect(applied.every(Boolean)).toBe(true);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4 * 2 ** 20);
  });

  it('reports a chunk that failed (throttling after the retries) as not applied, and the other chunks as applied', async () => {
    let sent = 0;
    const doc = {
      send: async () => {
        // The second of two chunks fails as the SDK throws after its retries.
        if (++sent === 2) throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ThrottlingException' });
      },
    };
    const errors: [string, number][] = [];
    const applied = await transactUpdates(
      doc as never,
      Array.from({ length: 150 }, (_, i) => update(i, 'x')),
      { supported: true },
      (err, writes) => errors.push([err.name, writes]),
    );
    expect(applied.slice(0, 100).every(Boolean)).toBe(true);
    expect(applied.slice(100).some(Boolean)).toBe(false);
    expect(errors).toEqual([['ThrottlingException', 50]]);
  });
});
