/**
 * The PagerDuty channel against a loopback Events API v2 stand-in (`platforms.ts`) that checks
 * PagerDuty's documented fields and limits: the exact JSON received, 202 as success, 429 and 5xx
 * retried inside the delivery budget (honouring Retry-After), 400 refused without a resend of the
 * same event, no redirects followed, and the routing key never in an error or log line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPagerDutyChannel } from '../../../shared/channels/pagerduty/index.js';
import { renderPagerDuty } from '../../../shared/channels/pagerduty/render.js';
import { ContentRefusedError, type DeliveryError } from '../../../shared/channels/channel.js';
import { deliver } from '../../../shared/channels/deliver.js';
import { createLogger } from '../../../shared/core/logger.js';
import { Secret } from '../../../shared/core/secret.js';
import { testClock } from '../../helpers/clock.js';
import { startLoopback } from '../../helpers/loopback.js';
import { fixtureNotification, manyAlertsNotification } from '../../helpers/notifications.js';
import { startPagerDutyPlatform, type PagerDutyPlatform } from './platforms.js';

const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdefABCDEF';
let pd: PagerDutyPlatform;
beforeAll(async () => {
  pd = await startPagerDutyPlatform();
});
afterAll(() => pd.close());

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger('debug', (line) => lines.push(line)) };
}
const channel = (key = ROUTING_KEY, name = 'pagerduty') =>
  createPagerDutyChannel({ routingKey: new Secret(key), eventsUrl: pd.url, name });
/** Three retries in 10 s, the waits between attempts made on a test clock (`clock.waits`), never spent. */
const options = (logger = capture().logger, clock = testClock()) => ({
  timeoutMs: 2000,
  retries: 3,
  budgetMs: 10_000,
  logger,
  clock,
});

describe('PagerDuty channel', () => {
  it('POSTs each event as JSON to /v2/enqueue: the routing key and exactly the rendered event', async () => {
    const n = {
      ...fixtureNotification('firing-queue-backlog-two-models'),
      acknowledgeUrl: 'https://ack.example.com/v1/ack/t',
    };
    const requests = pd.server.requests.length;
    await deliver(channel(), n, options());
    const received = pd.server.requests.slice(requests);
    expect(received.map((r) => [r.method, r.path, r.headers['content-type']])).toEqual(
      n.alerts.map(() => ['POST', '/v2/enqueue', 'application/json; charset=utf-8']),
    );
    expect(received.map((r) => JSON.parse(r.body.toString('utf8')) as unknown)).toEqual(
      renderPagerDuty(n).map((e) => ({ routing_key: ROUTING_KEY, ...e })),
    );
    const first = pd.accepted.at(-2)!;
    expect(first).toMatchObject({
      event_action: 'trigger',
      dedup_key: `${n.alerts[0]!.fingerprint}/${new Date(n.alerts[0]!.startsAt).toISOString()}`,
      payload: { severity: 'warning', class: 'VLLMQueueBacklog' },
    });
    expect(first.links?.[0]).toEqual({ href: 'https://ack.example.com/v1/ack/t', text: 'Acknowledge' });
  });

  it('retries 429 (after its Retry-After) and 5xx with backoff, and delivers each event once', async () => {
    const { lines, logger } = capture();
    pd.fail(1, 429, 1);
    pd.fail(1, 503);
    const before = pd.accepted.length;
    const clock = testClock();
    expect(await deliver(channel(), fixtureNotification('firing-kv-cache-critical'), options(logger, clock))).toBe(3);
    // The 429's Retry-After (1 s) instead of the backoff, then the backoff before the second retry (1 s × 1–2).
    expect(clock.waits).toHaveLength(2);
    expect(clock.waits[0]).toBe(1000);
    expect(clock.waits[1]).toBeGreaterThanOrEqual(1000);
    expect(clock.waits[1]).toBeLessThanOrEqual(2000);
    expect(pd.accepted.length - before).toBe(1);
    const failed = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.event === 'channel attempt failed');
    expect(failed.map((l) => [l.retry, l.error])).toEqual([
      [true, 'pagerduty: HTTP 429'],
      [true, 'pagerduty: HTTP 503: {"status":"error","message":"Internal Server Error"}'],
    ]);
  });

  it('a 429 in the middle of a notification resends only the events not yet accepted', async () => {
    const n = manyAlertsNotification(5);
    const requests = pd.server.requests.length;
    const before = pd.accepted.length;
    pd.failWhen((raw) => raw.includes('"dedup_key":"f2/'), 429, 0);
    expect(await deliver(channel(), n, options())).toBe(2);
    const sent = pd.server.requests
      .slice(requests)
      .map((r) => (JSON.parse(r.body.toString()) as { dedup_key: string }).dedup_key.split('/')[0]);
    // Five at once, then the retry: only f2 again.
    expect(sent.slice(0, 5).sort()).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
    expect(sent.slice(5)).toEqual(['f2']);
    expect(
      pd.accepted
        .slice(before)
        .map((e) => e.dedup_key!.split('/')[0])
        .sort(),
    ).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
  });

  it('a 400 is not retried: the refusal names PagerDuty’s message, the other events are still sent', async () => {
    const bad = createPagerDutyChannel({ routingKey: new Secret('short-key-0123456789'), eventsUrl: pd.url });
    const requests = pd.server.requests.length;
    const err = await bad
      .send(fixtureNotification('firing-queue-backlog-two-models'), AbortSignal.timeout(2000))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContentRefusedError);
    expect((err as DeliveryError).retryable).toBe(false);
    expect((err as Error).message).toMatch(
      /^pagerduty: PagerDuty refused 2 event\(s\): trigger [0-9a-f]+\/\S+: HTTP 400: \{"status":"invalid event","message":"Event object is invalid","errors":\["Length of 'routing_key' is incorrect/,
    );
    expect(pd.server.requests.length - requests).toBe(2);
  });

  it('a 400 on one event and a 429 on another: the retry sends only the rate-limited one, then reports the refusal', async () => {
    const n = manyAlertsNotification(3);
    const requests = pd.server.requests.length;
    pd.failWhen((raw) => raw.includes('"dedup_key":"f1/'), 400);
    pd.failWhen((raw) => raw.includes('"dedup_key":"f2/'), 429, 0);
    const err = await deliver(channel(), n, options()).catch((e: unknown) => e);
    const keys = pd.server.requests
      .slice(requests)
      .map((r) => (JSON.parse(r.body.toString()) as { dedup_key: string }).dedup_key.split('/')[0]);
    expect(keys.slice(0, 3).sort()).toEqual(['f0', 'f1', 'f2']);
    expect(keys.slice(3)).toEqual(['f2']);
    expect(err).toBeInstanceOf(ContentRefusedError);
    expect((err as Error).message).toMatch(
      /^pagerduty: PagerDuty refused 1 event\(s\): trigger f1\/\S+: HTTP 400: \{"status":"invalid event"/,
    );
  });

  it('through deliver, a 400 is sent once: no retry, no reduced rendering (it would be the same event)', async () => {
    const { lines, logger } = capture();
    const bad = createPagerDutyChannel({ routingKey: new Secret('short-key-0123456789'), eventsUrl: pd.url });
    const requests = pd.server.requests.length;
    const err = await deliver(bad, fixtureNotification('firing-kv-cache-critical'), options(logger)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ContentRefusedError);
    expect(pd.server.requests.length - requests).toBe(1);
    expect(lines.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual(['channel attempt failed']);
    expect(lines[0]).toContain('"retry":false');
  });

  it('never follows a redirect (a moved or hijacked endpoint): permanent, the target is never asked', async () => {
    const target = await startLoopback({ status: 202, body: '{}' });
    const moved = await startLoopback({ status: 307, headers: { location: `${target.url}/v2/enqueue` }, body: '' });
    const ch = createPagerDutyChannel({ routingKey: new Secret(ROUTING_KEY), eventsUrl: `${moved.url}/v2/enqueue` });
    const err = await deliver(ch, fixtureNotification('firing-kv-cache-critical'), options()).catch((e: unknown) => e);
    await Promise.all([target.close(), moved.close()]);
    expect(err).toMatchObject({ retryable: false, reason: 'client_error', message: 'pagerduty: HTTP 307' });
    expect(moved.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });

  it('gives up inside the delivery budget when PagerDuty keeps answering 5xx', async () => {
    pd.fail(50, 500);
    const requests = pd.server.requests.length;
    const clock = testClock();
    const err = await deliver(channel(), fixtureNotification('firing-kv-cache-critical'), {
      timeoutMs: 1000,
      retries: 10,
      budgetMs: 2500,
      logger: capture().logger,
      clock,
    }).catch((e: unknown) => e);
    const made = pd.server.requests.length - requests;
    pd.clear();
    expect(err).toMatchObject({ retryable: true });
    // 2.5 s of ≥ 500 ms backoffs (doubling): a handful of attempts, never the 11 allowed, and no wait that
    // would end past the budget.
    expect(made).toBeGreaterThanOrEqual(2);
    expect(made).toBeLessThanOrEqual(5);
    expect(clock.waits).toHaveLength(made - 1);
    expect(clock.waits.reduce((a, b) => a + b, 0)).toBeLessThan(2500);
  });

  it('keeps the routing key out of errors and logs, even when a reply echoes it', async () => {
    const { lines, logger } = capture();
    const echo = await startLoopback((r) => ({
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        status: 'invalid event',
        message: `bad key ${(JSON.parse(r.body.toString()) as { routing_key: string }).routing_key}`,
      }),
    }));
    const secretKey = 'S3cretRoutingKey0123456789abcdef';
    const ch = createPagerDutyChannel({ routingKey: new Secret(secretKey), eventsUrl: `${echo.url}/v2/enqueue` });
    const err = await deliver(ch, fixtureNotification('firing-kv-cache-critical'), options(logger)).catch(
      (e: unknown) => e,
    );
    logger.error('channel refused content', { error: (err as Error).message });
    await echo.close();
    expect(echo.requests[0]!.body.toString()).toContain(secretKey);
    expect((err as Error).message).toContain('bad key <redacted>');
    expect([(err as Error).message, ...lines].join('\n')).not.toContain(secretKey);
  });
});
