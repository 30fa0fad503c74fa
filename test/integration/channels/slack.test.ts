import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSlackChannel, renderSlack } from '../../../shared/channels/slack/index.js';
import { ContentRefusedError, DeliveryError } from '../../../shared/channels/channel.js';
import { Secret } from '../../../shared/core/secret.js';
import { startLoopback, type Loopback } from '../../helpers/loopback.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const HOOK_PATH = '/services/T0001/B0002/s3cr3tTOKENxyz';

describe('slack channel over HTTP', () => {
  let slack: Loopback;
  let channel: ReturnType<typeof createSlackChannel>;
  beforeAll(async () => {
    slack = await startLoopback();
    channel = createSlackChannel({ webhookUrl: new Secret(`${slack.url}${HOOK_PATH}`) });
  });
  afterAll(() => slack.close());

  const send = (signal = AbortSignal.timeout(5000)) =>
    channel.send(fixtureNotification('firing-queue-backlog-two-models'), signal);
  const failure = async (signal?: AbortSignal) => {
    const err = await send(signal).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as Error).message).not.toContain('s3cr3tTOKENxyz');
    return err as DeliveryError;
  };

  it('POSTs the Block Kit JSON to the webhook path and accepts 200 ok', async () => {
    slack.reply({ status: 200, body: 'ok' });
    const before = slack.requests.length;
    await send();
    const request = slack.requests[before]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe(HOOK_PATH);
    expect(request.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = JSON.parse(request.body.toString('utf8')) as ReturnType<typeof renderSlack>;
    expect(body).toEqual(renderSlack(fixtureNotification('firing-queue-backlog-two-models')));
    expect(body.text).toBe(
      '🔥 FIRING · warning · VLLMQueueBacklog (2)\nllama-3.1-70b: 85 requests waiting\nqwen3-8b: 80 requests waiting',
    );
    expect(body.blocks.map((b) => b.type)).toEqual(['header', 'section', 'context', 'section', 'context']);
  });

  it.each([
    [400, 'invalid_blocks'],
    [400, 'no_text'],
    [404, 'channel_not_found'],
    [403, 'invalid_token'],
  ])('treats HTTP %i %s as a permanent failure naming the error', async (status, error) => {
    slack.reply({ status, body: error });
    const err = await failure();
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(`slack: HTTP ${status}: ${error}`);
  });

  it('treats 429 as retryable and passes Retry-After on in milliseconds', async () => {
    slack.reply({ status: 429, headers: { 'retry-after': '30' }, body: 'rate_limited' });
    const err = await failure();
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBe(30_000);
  });

  it.each(['invalid_blocks', 'invalid_payload', 'no_text'])(
    'tells 400 %s (a refusal of the content) from configuration errors',
    async (code) => {
      slack.reply({ status: 400, body: code });
      const err = await failure();
      expect(err).toBeInstanceOf(ContentRefusedError);
      expect(err).toMatchObject({ retryable: false, message: `slack: HTTP 400: ${code}` });
    },
  );

  it.each([
    [404, 'channel_not_found'],
    [403, 'invalid_token'],
    [400, 'no_service_id'],
  ])('treats %i %s as permanent, not about content', async (status, code) => {
    slack.reply({ status, body: code });
    const err = await failure();
    expect(err).not.toBeInstanceOf(ContentRefusedError);
    expect(err.retryable).toBe(false);
  });

  it('treats 5xx as retryable', async () => {
    slack.reply({ status: 503, body: 'service unavailable' });
    const err = await failure();
    expect(err).toMatchObject({ retryable: true, retryAfterMs: undefined });
  });

  it('redacts the webhook path when a proxy echoes it back', async () => {
    slack.reply({ status: 404, body: `<html>No route for POST ${HOOK_PATH}</html>` });
    const err = await failure();
    expect(err.message).toBe('slack: HTTP 404: <html>No route for POST <redacted></html>');
  });

  it('does not follow redirects: a 3xx is a permanent failure', async () => {
    slack.reply({ status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } });
    const err = await failure();
    expect(err.retryable).toBe(false);
  });

  it('treats a time-out as retryable; after the whole message was sent, its outcome is unknown', async () => {
    slack.reply({ hang: true });
    const err = await failure(AbortSignal.timeout(300));
    expect(err.retryable).toBe(true);
    expect(err.outcomeUnknown).toBe(true);
    expect(err.message).toBe(
      'slack: request timed out or was aborted after the whole message was sent: it may have been delivered',
    );
  });

  it('treats a refused connection as retryable', async () => {
    const closed = await startLoopback();
    await closed.close();
    const offline = createSlackChannel({ webhookUrl: new Secret(`${closed.url}${HOOK_PATH}`) });
    const err = await offline
      .send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(5000))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as DeliveryError).retryable).toBe(true);
    expect((err as Error).message).toBe('slack: request failed (ECONNREFUSED)');
  });

  it('names the cause when the request cannot even start (a scheme Node cannot request), never the URL', async () => {
    const blocked = createSlackChannel({ webhookUrl: new Secret(`ftp://127.0.0.1:1${HOOK_PATH}`) });
    const err = await blocked
      .send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(5000))
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('slack: request failed (ERR_INVALID_PROTOCOL)');
  });
});

describe('slack channel whose reply stalls after its status line', () => {
  it('counts 200 as delivered without waiting for the body, so no retry sends a second copy', async () => {
    const { createServer } = await import('node:http');
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        res.flushHeaders(); // and never the body
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const { port } = server.address() as { port: number };
    const channel = createSlackChannel({ webhookUrl: new Secret(`http://127.0.0.1:${port}${HOOK_PATH}`) });
    await channel.send(fixtureNotification('firing-queue-backlog-two-models'), AbortSignal.timeout(2000));
    expect(bodies).toHaveLength(1);
    server.closeAllConnections();
    await new Promise<void>((ok) => server.close(() => ok()));
  });
});
