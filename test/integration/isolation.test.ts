/**
 * One bad alert never blocks its group: per-alert failures (an item over DynamoDB's 400 KB, a key over
 * 2,048 bytes, text an encoder or a platform refuses) are isolated. The healthy alerts reach every
 * channel and are recorded; the bad one goes out reduced and marked "(cut)"; the request answers 200,
 * and Alertmanager's retry of the group is a duplicate. Real app, dynalite through the AWS SDK, the real
 * channels and loopback stand-ins of Slack, Feishu and SNS.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Alert, WebhookMessage } from '../../shared/alertmanager/schema.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { FormClient } from './ack-harness.js';
import { isolationHarness, startPlatforms, type IsolationHarness, type Platforms } from './isolation-harness.js';

const HEALTHY = ['llama-3.1-70b: 85 requests waiting', 'qwen3-8b: 80 requests waiting'];
const HEALTHY_FPS = ['c10780c1bb3d6376', 'b70e989fd7d03295'];
const BAD_SUMMARY = 'mistral-7b: 500 requests waiting';
/** The bad alert's line in the page's result list: named by alertname and key labels, isolated (`<bdi>`). */
const BAD_ACKNOWLEDGED = '<bdi>VLLMQueueBacklog</bdi> · model_name: <bdi>mistral-7b</bdi>: acknowledged';
const BAD_FP = 'd3b07384d113edec';
const CHANNELS = ['feishu', 'slack', 'sns'];

let db: LocalDynamoDb;
let p: Platforms;
let h: IsolationHarness;
beforeAll(async () => {
  [db, p] = await Promise.all([startLocalDynamoDb('isolation-0'), startPlatforms()]);
});
afterAll(async () => {
  await Promise.all([db.close(), p.close()]);
});
beforeEach(async () => {
  p.slack.refuse(undefined);
  p.feishu.refuse(undefined);
  h = await isolationHarness(db, p);
});

/** The two-model queue backlog group with a third alert, placed first, changed by `spoil`. */
function groupWith(spoil: (bad: Alert) => void): WebhookMessage {
  const message = fixture('firing-queue-backlog-two-models');
  const bad: Alert = structuredClone(message.alerts[0]!);
  bad.labels.model_name = 'mistral-7b';
  bad.annotations.summary = BAD_SUMMARY;
  bad.fingerprint = BAD_FP;
  spoil(bad);
  message.alerts.unshift(bad);
  return message;
}

/** What each platform accepted since `marks`, as text. */
type Sent = { slack: string[]; feishu: string[]; sns: string[] };
function sentSince(marks: Record<string, number>): Sent {
  return {
    slack: p.slack.accepted.slice(marks.slack).map((m) => JSON.stringify(m)),
    feishu: p.feishu.accepted.slice(marks.feishu).map((m) => JSON.stringify(m)),
    sns: p.sns.delivered.slice(marks.sns).map((m) => m.Message!),
  };
}
const marks = () => ({ slack: p.slack.accepted.length, feishu: p.feishu.accepted.length, sns: p.sns.delivered.length });

/** Each platform got exactly one message naming all three alerts. */
function expectAllThreeEverywhere(sent: Partial<Sent>): void {
  for (const [platform, messages] of Object.entries(sent)) {
    expect(messages, platform).toHaveLength(1);
    for (const summary of [...HEALTHY, BAD_SUMMARY]) expect(messages[0], `${platform}: ${summary}`).toContain(summary);
  }
}

async function record(fingerprint: string): Promise<{
  record: { channels: string[]; alert: Alert; acknowledgement?: { by: string } };
  history: { type: string }[];
}> {
  const res = await h.audit(fingerprint);
  expect(res.status, `record of ${fingerprint.slice(0, 40)}`).toBe(200);
  return (await res.json()) as Awaited<ReturnType<typeof record>>;
}

/** Acknowledges through the Slack message's button, as a browser would. */
async function acknowledgeFromSlack(slackMessage: string, by: string): Promise<string> {
  const button = (
    JSON.parse(slackMessage) as { blocks: { type: string; elements?: { url?: string }[] }[] }
  ).blocks.find((b) => b.type === 'actions');
  expect(button, 'the Slack message carries the Acknowledge button').toBeDefined();
  const path = new URL(button!.elements![0]!.url!).pathname;
  const browser = new FormClient(h.app);
  expect((await browser.open(path)).status).toBe(200);
  expect((await browser.submit(path, { name: by })).status).toBe(200);
  return browser.lastHtml;
}

async function expectRetryIsDuplicate(message: WebhookMessage): Promise<void> {
  const before = marks();
  const again = await h.webhook(message);
  expect(again.status).toBe(200);
  expect(await again.json()).toMatchObject({ received: 3, notified: 0, duplicates: 3 });
  expect(sentSince(before)).toEqual({ slack: [], feishu: [], sns: [] });
}

describe('an alert with a 450 KB annotation', () => {
  const message = () =>
    groupWith((bad) => void (bad.annotations.description = `Backlog dump: ${'x'.repeat(450 * 1024)}`));

  it('goes out cut and marked, its siblings in full; all are recorded, acknowledgeable, and the retry is a duplicate', async () => {
    const before = marks();
    const res = await h.webhook(message());
    expect(res.status).toBe(200);
    const sent = sentSince(before);
    expectAllThreeEverywhere(sent);
    for (const [platform, [text]] of Object.entries(sent)) {
      expect(text, platform).toContain('(cut)');
      expect(text, platform).toContain('Requests are queueing faster than the engine admits them.');
    }

    for (const fp of [...HEALTHY_FPS, BAD_FP]) expect((await record(fp)).record.channels).toEqual(CHANNELS);
    const stored = (await record(BAD_FP)).record.alert.annotations.description!;
    expect(stored.startsWith('Backlog dump: xxx')).toBe(true);
    expect(stored.endsWith('(cut)')).toBe(true);
    expect(stored.length).toBeLessThan(100 * 1024);

    const page = await acknowledgeFromSlack(sent.slack[0]!, 'alice');
    expect(page).toContain(BAD_ACKNOWLEDGED);
    for (const fp of [...HEALTHY_FPS, BAD_FP]) expect((await record(fp)).record.acknowledgement?.by).toBe('alice');

    await expectRetryIsDuplicate(message());
  });
});

describe('an alert whose fields together exceed the 400 KB item limit', () => {
  // 40 annotations of 15 KiB: each under the per-field cut, 600 KiB together.
  const message = () =>
    groupWith((bad) => {
      for (let i = 0; i < 40; i++) bad.annotations[`dump_${i}`] = `${i}:${'y'.repeat(15 * 1024)}`;
    });

  it('is stored cut further (its acknowledgement record fits), acknowledgeable, and the retry is a duplicate', async () => {
    const before = marks();
    const res = await h.webhook(message());
    expect(res.status).toBe(200);
    const sent = sentSince(before);
    expectAllThreeEverywhere(sent);
    for (const fp of [...HEALTHY_FPS, BAD_FP]) expect((await record(fp)).record.channels).toEqual(CHANNELS);
    const stored = (await record(BAD_FP)).record.alert as Alert & { cut?: string[] };
    expect(stored.annotations.summary).toBe(BAD_SUMMARY);
    expect(stored.annotations.dump_0!.endsWith('(cut)')).toBe(true);
    expect(stored.cut).toContain('annotations.dump_39');
    const page = await acknowledgeFromSlack(sent.slack[0]!, 'carol');
    expect(page).toContain(BAD_ACKNOWLEDGED);
    await expectRetryIsDuplicate(message());
  });
});

describe('a fingerprint so long that its keys would exceed 2,048 bytes', () => {
  const LONG_FP = `${'f0'.repeat(1050)}`;
  const message = () => groupWith((bad) => void (bad.fingerprint = LONG_FP));

  it('is keyed by a stable digest; normal keys are unchanged; everything is delivered, recorded and acknowledgeable', async () => {
    const before = marks();
    const res = await h.webhook(message());
    expect(res.status).toBe(200);
    const sent = sentSince(before);
    expectAllThreeEverywhere(sent);

    const keys = await h.keys();
    for (const key of keys) expect(Buffer.byteLength(key), key.slice(0, 60)).toBeLessThanOrEqual(2048);
    // Deployed tables keep their meaning: keys of ordinary fingerprints are as before.
    for (const fp of HEALTHY_FPS) {
      expect(keys).toContain(`alert#${fp}`);
      // The flap run lives in the alert record (no request of its own); no `flap#` item is written.
      expect(keys).not.toContain(`flap#${fp}`);
      // A new alert's `notified` event rides in its record (one write after delivery), not in a history item.
      expect(keys).not.toContain(`history#${fp}#0000000001`);
      expect(keys.some((k) => k.startsWith(`event#${fp}#2026-11-29T12:42:23.143Z#firing`))).toBe(true);
    }
    expect(keys.filter((k) => k.includes(LONG_FP))).toEqual([]);

    for (const fp of [...HEALTHY_FPS, LONG_FP]) expect((await record(fp)).record.channels).toEqual(CHANNELS);
    for (const fp of [...HEALTHY_FPS, LONG_FP])
      expect((await record(fp)).history.map((e) => e.type)).toEqual(['notified']);
    const page = await acknowledgeFromSlack(sent.slack[0]!, 'bob');
    expect(page).toContain(BAD_ACKNOWLEDGED);
    expect((await record(LONG_FP)).record.acknowledgement?.by).toBe('bob');

    await expectRetryIsDuplicate(message());
  });
});

describe('an alert whose dedupe item DynamoDB refuses', () => {
  it('is sent without dedupe and logged as an error naming it; its siblings are deduped as usual', async () => {
    h = await isolationHarness(db, p, { refuseClaimOf: BAD_FP });
    const message = groupWith(() => undefined);
    const before = marks();
    const res = await h.webhook(message);
    expect(res.status).toBe(200);
    expectAllThreeEverywhere(sentSince(before));
    expect(h.logs.find((l) => l.level === 'error' && l.event === 'alert not deduped')).toMatchObject({
      fingerprint: BAD_FP,
      alertname: 'VLLMQueueBacklog',
      error: expect.stringMatching(/2048/),
    });
    for (const fp of [...HEALTHY_FPS, BAD_FP]) expect((await record(fp)).record.channels).toEqual(CHANNELS);
    // The retry: the healthy ones are duplicates; the one that cannot be deduped is sent again rather than lost.
    const again = await h.webhook(message);
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ received: 3, notified: 1, duplicates: 2 });
  });
});

describe('text an encoder refuses', () => {
  // A lone surrogate (valid JSON, not valid Unicode): `encodeURIComponent` throws on it, so the silence
  // link, the SNS query encoding and any URL built from the labels failed for the whole group.
  const message = () =>
    groupWith((bad) => {
      bad.labels.model_name = 'mistral-7b\ud800';
      bad.annotations.description = 'broken \udfff text';
    });

  it('goes out with the text made well-formed and marked, without a silence link that would not match', async () => {
    const before = marks();
    const res = await h.webhook(JSON.stringify(message()));
    expect(res.status).toBe(200);
    const sent = sentSince(before);
    expectAllThreeEverywhere(sent);
    expect(sent.sns[0]).toContain('model_name: mistral-7b\ufffd (cut)');
    expect(sent.sns[0]).toContain('broken \ufffd text (cut)');
    // Two silence links (the healthy alerts), not three.
    expect(sent.sns[0]!.match(/Silence: /g)).toHaveLength(2);
    for (const fp of [...HEALTHY_FPS, BAD_FP]) expect((await record(fp)).record.channels).toEqual(CHANNELS);
    await expectRetryIsDuplicate(message());
  });
});

describe('text a platform refuses', () => {
  // A NUL character: platforms that keep text in PostgreSQL refuse it. Stands in for any content check
  // of a platform we cannot predict.
  const NUL = '\\u0000';
  const message = () => groupWith((bad) => void (bad.annotations.description = 'queue dump:\u0000\u0000 end'));

  it('Slack (400 invalid_blocks) and Feishu (code 9499 Bad Request) get one reduced retry, which they accept', async () => {
    p.slack.refuse((raw) => (raw.includes(NUL) ? 'invalid_blocks' : undefined));
    p.feishu.refuse((raw) =>
      raw.includes(NUL) ? { code: 9499, msg: 'Bad Request: fail to parse content' } : undefined,
    );
    const before = marks();
    const slackRequests = p.slack.server.requests.length;
    const res = await h.webhook(message());
    expect(res.status).toBe(200);
    const sent = sentSince(before);
    expectAllThreeEverywhere(sent);
    expect(p.slack.server.requests.length - slackRequests).toBe(2);
    expect(sent.slack[0]).toContain('queue dump: end');
    expect(sent.feishu[0]).toContain('queue dump: end');
    expect(sent.slack[0]).toContain('(cut)');
    for (const fp of [...HEALTHY_FPS, BAD_FP]) expect((await record(fp)).record.channels).toEqual(CHANNELS);
    await expectRetryIsDuplicate(message());
  });

  it('SNS (InvalidParameter on the Message) gets one reduced retry', async () => {
    p.sns.failNext(400, 'InvalidParameter', 'Invalid parameter: Message');
    const before = marks();
    const res = await h.webhook(message());
    expect(res.status).toBe(200);
    expectAllThreeEverywhere(sentSince(before));
  });

  it('a refusal of the reduced message too answers 200: the other channels deliver, the error names the alerts', async () => {
    p.slack.refuse((raw) => (raw.includes('mistral-7b') ? 'invalid_blocks' : undefined));
    const before = marks();
    const res = await h.webhook(message());
    expect(res.status).toBe(200);
    const body = (await res.json()) as { channels: Record<string, { status: string }> };
    expect(body.channels.slack!.status).toBe('refused');
    const sent = sentSince(before);
    expect(sent.slack).toEqual([]);
    expectAllThreeEverywhere({ feishu: sent.feishu, sns: sent.sns });
    const error = h.logs.find((l) => l.level === 'error' && l.event === 'channel refused content');
    expect(error).toMatchObject({ channel: 'slack', fingerprints: [BAD_FP, ...HEALTHY_FPS] });
    expect((await record(BAD_FP)).record.channels).toEqual(['feishu', 'sns']);
  });

  it('a permanent refusal that is not about content (404 channel_not_found) still answers 502', async () => {
    p.slack.refuse(() => ({ status: 404, code: 'channel_not_found' }));
    const res = await h.webhook(fixture('firing-kv-cache-critical'));
    expect(res.status).toBe(502);
  });
});
