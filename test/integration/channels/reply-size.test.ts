/**
 * A platform (or a proxy in front of it) whose reply never ends: the webhook channels read at most
 * `MAX_REPLY_BYTES` of it, then close the connection, instead of buffering it in memory until the
 * attempt's time-out (hundreds of MB a second on loopback; a Lambda runs out of memory mid-fan-out).
 * Each attempt here has a minute; the reply stream is endless, so only a reader that stops at its
 * limit can finish.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createFeishuChannel } from '../../../shared/channels/feishu/index.js';
import { MAX_REPLY_BYTES } from '../../../shared/channels/http.js';
import { createPagerDutyChannel } from '../../../shared/channels/pagerduty/index.js';
import { createSlackChannel } from '../../../shared/channels/slack/index.js';
import { Secret } from '../../../shared/core/secret.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const CHUNK = Buffer.alloc(64 * 1024, 'x');

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A loopback platform answering `status` with an endless chunked body; counts the bytes the client took. */
async function endlessPlatform(status: number): Promise<{ url: string; written: () => number; closed: Promise<void> }> {
  let written = 0;
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json' });
    const pump = () => {
      while (!res.destroyed && res.write(CHUNK)) written += CHUNK.byteLength;
      if (!res.destroyed) res.once('drain', pump);
    };
    res.once('close', () => closed());
    pump();
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    written: () => written,
    closed: done,
  };
}

describe('a reply that never ends', () => {
  it('Slack: a 2xx status decides (accepted); the reply is read no further than the limit', {
    timeout: 30_000,
  }, async () => {
    const platform = await endlessPlatform(200);
    const channel = createSlackChannel({ webhookUrl: new Secret(platform.url), name: 'slack' });
    await expect(
      channel.send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(60_000)),
    ).resolves.toBeUndefined();
    await platform.closed;
    // What the client took: the limit plus what the sockets' buffers held when it closed.
    expect(platform.written()).toBeLessThan(MAX_REPLY_BYTES + 32 * 1024 * 1024);
  });

  it('Feishu: a 2xx reply too long to be its JSON is not Feishu’s reply (refused, not retried)', {
    timeout: 30_000,
  }, async () => {
    const platform = await endlessPlatform(200);
    const channel = createFeishuChannel({ webhookUrl: new Secret(platform.url), name: 'feishu' });
    const error = await channel
      .send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(60_000))
      .catch((err: unknown) => err);
    expect(error).toMatchObject({ name: 'DeliveryError', retryable: false });
    await platform.closed;
    expect(platform.written()).toBeLessThan(MAX_REPLY_BYTES + 32 * 1024 * 1024);
  });

  it('PagerDuty: a 5xx stays retryable, classified by its status', { timeout: 30_000 }, async () => {
    const platform = await endlessPlatform(503);
    const channel = createPagerDutyChannel({
      eventsUrl: platform.url,
      routingKey: new Secret('a'.repeat(32)),
      name: 'pagerduty',
    });
    const error = await channel
      .send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(60_000))
      .catch((err: unknown) => err);
    expect(error).toMatchObject({ name: 'DeliveryError', retryable: true, reason: 'server_error' });
    expect((error as Error).message).toBe('pagerduty: HTTP 503');
    await platform.closed;
  });
});
