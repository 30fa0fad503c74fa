import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AWS_CLIENT_DEFAULTS } from '../../shared/runtime/aws-clients.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';

let hung: Loopback;
beforeAll(async () => {
  hung = await startLoopback({ hang: true });
});
afterAll(async () => hung.close());

describe('AWS client defaults', () => {
  it('make a request to an endpoint that never answers fail instead of hanging', async () => {
    const client = new DynamoDBClient({
      ...AWS_CLIENT_DEFAULTS,
      endpoint: hung.url,
      region: 'local',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
    await expect(client.send(new ListTablesCommand({}))).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(hung.requests).toHaveLength(1);
    client.destroy();
  });
});
