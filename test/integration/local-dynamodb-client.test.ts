/**
 * The embedded store's client (`npm start`, tests) skips what only AWS reads: it computes no SigV4
 * signature (dynalite never checks one) and sends no User-Agent or recursion-detection header. A
 * client for a real table, built the ordinary way, still signs and sends both.
 */
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';

/** The headers of each request `client` sends, as they leave its middleware (after signing). */
function sentHeaders(client: DynamoDBClient): Record<string, string>[] {
  const seen: Record<string, string>[] = [];
  client.middlewareStack.add(
    (next) => async (args) => {
      seen.push({ ...(args.request as { headers: Record<string, string> }).headers });
      return next(args);
    },
    { step: 'finalizeRequest', priority: 'low', name: 'testSentHeaders' },
  );
  return seen;
}

describe('the embedded store client', () => {
  let db: LocalDynamoDb;
  beforeAll(async () => {
    db = await startLocalDynamoDb('client-test');
  });
  afterAll(() => db.close());

  it('reaches dynalite with SigV4-shaped headers it did not compute, and without AWS-only headers', async () => {
    const seen = sentHeaders(db.client);
    expect((await db.client.send(new ListTablesCommand({}))).TableNames).toContain('client-test');
    expect(seen).toHaveLength(1);
    const headers = seen[0]!;
    expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/local\/dynamodb\/aws4_request, SignedHeaders=host;x-amz-date, Signature=unsigned$/);
    expect(headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(headers.authorization).toContain(`/${headers['x-amz-date']!.slice(0, 8)}/`);
    expect(Object.keys(headers).filter((h) => /user-agent|x-amzn-trace-id/i.test(h))).toEqual([]);
  });

  it('leaves other clients as the SDK builds them: a client for a real table signs (over HTTP to the same dynalite)', async () => {
    const client = new DynamoDBClient({ endpoint: db.endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      const seen = sentHeaders(client);
      await client.send(new ListTablesCommand({}));
      expect(seen[0]!.authorization).toMatch(/, Signature=[0-9a-f]{64}$/);
      expect(seen[0]!['user-agent']).toMatch(/aws-sdk-js/);
    } finally {
      client.destroy();
    }
  });
});
