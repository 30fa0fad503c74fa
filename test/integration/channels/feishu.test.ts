import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeishuChannel, renderFeishu, type FeishuMessage } from '../../../shared/channels/feishu/index.js';
import { ContentRefusedError, DeliveryError } from '../../../shared/channels/channel.js';
import { Secret } from '../../../shared/core/secret.js';
import { startLoopback, type Loopback, type RecordedRequest, type ScriptedReply } from '../../helpers/loopback.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const HOOK_PATH = '/open-apis/bot/v2/hook/0f1e2d3c-hook-secret-id';
const SIGNING_SECRET = 'feishu-signing-secret-42';
const NOW = new Date('2026-11-29T12:42:30.900Z');

const json = (body: unknown, status = 200): ScriptedReply => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** Answers like Feishu: verifies `sign` the way the platform does, then code 0 or 19021. */
function feishuVerifier(request: RecordedRequest): ScriptedReply {
  const body = JSON.parse(request.body.toString('utf8')) as FeishuMessage;
  if (body.timestamp === undefined) return json({ code: 0, msg: 'success', data: {} });
  const expected = createHmac('sha256', `${body.timestamp}\n${SIGNING_SECRET}`)
    .update(Buffer.alloc(0))
    .digest('base64');
  if (body.sign !== expected)
    return json({
      code: 19021,
      msg: 'sign match fail or timestamp is not within one hour from current time',
      data: {},
    });
  return json({ StatusCode: 0, StatusMessage: 'success', code: 0, msg: 'success', data: {} });
}

describe('feishu channel over HTTP', () => {
  let feishu: Loopback;
  const url = () => new Secret(`${feishu.url}${HOOK_PATH}`);
  beforeAll(async () => {
    feishu = await startLoopback(feishuVerifier);
  });
  afterAll(() => feishu.close());

  const lastBody = () => JSON.parse(feishu.requests.at(-1)!.body.toString('utf8')) as FeishuMessage;
  const failure = async (channel: ReturnType<typeof createFeishuChannel>) => {
    const err = await channel
      .send(fixtureNotification('firing-kv-cache-critical'), AbortSignal.timeout(5000))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeliveryError);
    expect((err as Error).message).not.toContain('hook-secret-id');
    expect((err as Error).message).not.toContain(SIGNING_SECRET);
    return err as DeliveryError;
  };

  it('sends a signed card whose signature the platform verifies', async () => {
    const channel = createFeishuChannel({ webhookUrl: url(), secret: new Secret(SIGNING_SECRET), now: () => NOW });
    const n = fixtureNotification('firing-gpu-memory-leak');
    await channel.send(n, AbortSignal.timeout(5000));
    const request = feishu.requests.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe(HOOK_PATH);
    expect(request.headers['content-type']).toBe('application/json; charset=utf-8');
    const { timestamp, sign, ...card } = lastBody();
    expect(timestamp).toBe('1795956150');
    expect(sign).toBe(createHmac('sha256', `1795956150\n${SIGNING_SECRET}`).digest('base64'));
    expect(card).toEqual(renderFeishu(n));
    // Chinese unless the instance says otherwise.
    expect(card.card.header).toEqual({
      title: { tag: 'plain_text', content: '🔥 告警 · warning · GPUMemoryLeak (1)' },
      template: 'orange',
    });
  });

  it('sends no timestamp or sign without a secret', async () => {
    await createFeishuChannel({ webhookUrl: url() }).send(
      fixtureNotification('firing-kv-cache-critical'),
      AbortSignal.timeout(5000),
    );
    expect(Object.keys(lastBody())).toEqual(['msg_type', 'card']);
  });

  it('fails permanently on HTTP 200 with code 19021 (bad signature): a configuration error, quoting code and msg', async () => {
    const err = await failure(
      createFeishuChannel({
        webhookUrl: url(),
        secret: new Secret('the-wrong-secret'),
        now: () => NOW,
        name: 'feishu-qwen',
      }),
    );
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(
      "feishu-qwen: code 19021: sign match fail or timestamp is not within one hour from current time (configuration error: signature check failed: check the signing secret and this host's clock)",
    );
  });

  it('fails permanently on a keyword mismatch (19024): a configuration error', async () => {
    feishu.reply(json({ code: 19024, msg: 'Key Words Not Found', data: {} }));
    const err = await failure(createFeishuChannel({ webhookUrl: url() }));
    expect(err).toMatchObject({
      retryable: false,
      message:
        "feishu: code 19024: Key Words Not Found (configuration error: keyword check failed: the bot's keyword security setting rejects this message)",
    });
  });

  it.each([9499, 11232])('retries on rate-limit code %i sent with HTTP 200', async (code) => {
    feishu.reply(json({ code, msg: 'too many request', data: {} }));
    const err = await failure(createFeishuChannel({ webhookUrl: url() }));
    expect(err.retryable).toBe(true);
    expect(err.message).toBe(`feishu: code ${code}: too many request`);
  });

  it.each([
    ['HTTP 200, code 9499 Bad Request', { status: 200, code: 9499, msg: 'Bad Request: fail to parse content' }],
    ['HTTP 400, code 9499 Bad Request (a body it does not take)', { status: 400, code: 9499, msg: 'Bad Request' }],
  ])('tells a refusal of the content apart: %s', async (_name, r) => {
    feishu.reply(json({ code: r.code, msg: r.msg, data: {} }, r.status));
    const err = await failure(createFeishuChannel({ webhookUrl: url() }));
    expect(err).toBeInstanceOf(ContentRefusedError);
    expect(err.retryable).toBe(false);
  });

  it('treats HTTP 429 as retryable with Retry-After in milliseconds', async () => {
    feishu.reply({ status: 429, headers: { 'retry-after': '7' }, body: '' });
    const err = await failure(createFeishuChannel({ webhookUrl: url() }));
    expect(err).toMatchObject({ retryable: true, retryAfterMs: 7000, message: 'feishu: HTTP 429' });
  });

  it('treats a 200 that is not JSON as a permanent failure', async () => {
    feishu.reply({ status: 200, body: '<html>captive portal</html>' });
    const err = await failure(createFeishuChannel({ webhookUrl: url() }));
    expect(err).toMatchObject({ retryable: false, message: 'feishu: reply is not JSON' });
  });
});
