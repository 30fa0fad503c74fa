/**
 * The acknowledgement page end to end in-process: real app, pipeline, ack runtime and DynamoDB on
 * dynalite; recording channels. GETs never write; only a same-origin POST with the page's nonce and
 * cookie acknowledges, once; follow-ups, suppressed reminders, resolved messages and the audit route.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signAckToken } from '../../shared/ack/token.js';
import { renderSlack } from '../../shared/channels/slack/index.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { Secret } from '../../shared/core/secret.js';
import { fixture } from '../helpers/fixtures.js';
import { ackHarness, ackPath, FormClient, type AckHarness } from './ack-harness.js';

const FP = '936e109b8c52c001';
const BOTS = [
  'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.4266; Pro)',
  'facebookexternalhit/1.1',
  'curl/8.5.0',
  'LarkBot/1.0',
];

let db: LocalDynamoDb;
let h: AckHarness;
beforeAll(async () => {
  db = await startLocalDynamoDb('ack-routes-0');
});
afterAll(async () => db.close());
beforeEach(async () => {
  h = await ackHarness(db);
});

const slack = () => h.channels[0]!;
const sns = () => h.channels[1]!;

async function fire(): Promise<string> {
  expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(200);
  return ackPath(slack().received[0]);
}

describe('links in messages', () => {
  it('gives each channel its own signed link to PUBLIC_URL, and renders it as a Slack button', async () => {
    await fire();
    const [s, n] = [slack().received[0]!, sns().received[0]!];
    expect(s.acknowledgeUrl).toMatch(/^https:\/\/ack\.example\.com\/v1\/ack\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(n.acknowledgeUrl).not.toBe(s.acknowledgeUrl);
    const button = renderSlack(s).blocks.find((b) => b.type === 'actions');
    expect(button).toEqual({
      type: 'actions',
      elements: [
        {
          type: 'button',
          text: { type: 'plain_text', text: 'Acknowledge', emoji: true },
          url: s.acknowledgeUrl,
          style: 'primary',
          action_id: 'acknowledge',
        },
      ],
    });
  });
});

describe('GET /v1/ack/:token', () => {
  it('shows the alert and a form, with no-store, noindex and a strict CSP', async () => {
    const res = await new FormClient(h.app).open(await fire());
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-robots-tag')).toBe('noindex, nofollow');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(
      /^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    const html = await res.text();
    expect(html).toContain('KV cache 97% full on qwen3-8b');
    expect(html).toContain('Firing</span> since 2026-11-29 12:42:23 UTC');
    expect(html).toContain('Not acknowledged yet.');
    expect(html).toMatch(/<form method="post">/);
    expect(html).not.toMatch(/<script/i);
  });

  it('changes nothing in DynamoDB, whatever fetches it and however often', async () => {
    const path = await fire();
    const before = await h.scan();
    for (let i = 0; i < 30; i++) {
      const agent = BOTS[i % BOTS.length]!;
      const res = await h.app.request(path, {
        method: i % 5 === 4 ? 'HEAD' : 'GET',
        headers: { 'user-agent': agent, accept: '*/*' },
      });
      expect(res.status, agent).toBe(200);
    }
    expect(await h.scan()).toBe(before);
    expect(slack().received).toHaveLength(1);
    expect(before).toContain(`alert#${FP}`);
    expect(before).not.toContain('"ack"');
  });

  it('answers forged, altered, expired and malformed links with a 4xx page', async () => {
    const path = await fire();
    const token = path.split('/').pop()!;
    const [payload, sig] = token.split('.') as [string, string];
    const forged = signAckToken(
      { fingerprints: [FP], group: 'g', channel: 'slack', issuedAt: 1, expiresAt: 4_000_000_000 },
      { current: new Secret('another-secret-0123456789abcdefghij') },
    );
    const cases: [string, number, RegExp][] = [
      [`/v1/ack/${forged}`, 403, /signature does not match/],
      [`/v1/ack/${payload}x.${sig}`, 403, /signature does not match/],
      ['/v1/ack/not-a-token', 400, /malformed/],
    ];
    for (const [p, status, text] of cases) {
      const res = await h.app.request(p);
      expect(res.status, p).toBe(status);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.text()).toMatch(text);
    }
    h.advance(h.config.ackTokenTtlSeconds * 1000 + 1000);
    const expired = await h.app.request(path);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toMatch(/expired at/);
  });

  it('answers other methods 405 without touching anything', async () => {
    const path = await fire();
    const before = await h.scan();
    const res = await h.app.request(path, { method: 'PUT', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(await h.scan()).toBe(before);
  });

  it('scopes the form cookie to its own link, so two open links do not break each other', async () => {
    const path = await fire();
    const res = await h.app.request(path);
    const csrf = res.headers.getSetCookie().find((line) => line.startsWith('ack_csrf='));
    expect(csrf).toContain(`Path=${path};`);
  });

  it('fills the name remembered in the cookie', async () => {
    const path = await fire();
    const res = await h.app.request(path, { headers: { cookie: 'ack_name=alice%20%3Cb%3E' } });
    expect(await res.text()).toContain('name="name" maxlength="64" autocomplete="name" value="alice &lt;b&gt;"');
  });
});

describe('POST /v1/ack/:token', () => {
  it('refuses posts without the page cookie, from other sites, or with a forged nonce, and changes nothing', async () => {
    const path = await fire();
    const browser = new FormClient(h.app);
    await browser.open(path);
    const before = await h.scan();
    const attempts: [Promise<Response>, RegExp][] = [
      [new FormClient(h.app).submit(path, { name: 'mallory' }, { hidden: browser.hidden() }), /cookie/],
      [
        browser.submit(
          path,
          { name: 'mallory' },
          { headers: { origin: 'https://evil.example.net', 'sec-fetch-site': 'cross-site' } },
        ),
        /another site/,
      ],
      [
        browser.submit(
          path,
          { name: 'mallory' },
          { headers: { origin: 'https://evil.example.net', 'sec-fetch-site': '' } },
        ),
        /another site/,
      ],
      [browser.submit(path, { name: 'mallory' }, { hidden: { mac: 'AAAA' } }), /does not belong/],
      // Origin: null passes only with Sec-Fetch-Site: same-origin, and then only with the page's cookie and nonce.
      [
        new FormClient(h.app).submit(
          path,
          { name: 'mallory' },
          { hidden: browser.hidden(), headers: { origin: 'null', 'sec-fetch-site': 'same-origin' } },
        ),
        /cookie/,
      ],
      [
        browser.submit(path, { name: 'mallory' }, { headers: { origin: 'null', 'sec-fetch-site': 'same-site' } }),
        /another site/,
      ],
      [browser.submit(path, { name: 'mallory' }, { headers: { origin: 'null', 'sec-fetch-site': '' } }), /opaque/],
    ];
    for (const [attempt, text] of attempts) {
      const res = await attempt;
      expect(res.status).toBe(403);
      expect(await res.text()).toMatch(text);
    }
    expect(await h.scan()).toBe(before);
  });

  it('acknowledges once, remembers the name, follows up on the carrying channels, and reports the first ack to a second one', async () => {
    const path = await fire();
    const alice = new FormClient(h.app);
    const bob = new FormClient(h.app);
    await alice.open(path);
    await bob.open(path);
    const res = await alice.submit(path, { name: '  alice  ' });
    expect(res.status).toBe(200);
    expect(alice.lastHtml).toContain(
      '<li><bdi>VLLMKVCacheNearlyFull</bdi> · model_name: <bdi>qwen3-8b</bdi> · instance: <bdi>127.0.0.1:9800</bdi>: acknowledged</li>',
    );
    expect(alice.lastHtml).toMatch(/Acknowledged by <strong><bdi>alice<\/bdi><\/strong>/);
    expect(alice.lastHtml).not.toContain('<form');
    expect(alice.cookies.get('ack_name')).toBe('alice');
    for (const ch of [slack(), sns()]) {
      expect(ch.received.map((n) => n.kind ?? 'alert')).toEqual(['alert', 'acknowledged']);
      expect(ch.received[1]!.alerts[0]!.acknowledgement).toMatchObject({ by: 'alice', channel: 'slack' });
    }
    expect(JSON.stringify(renderSlack(slack().received[1]!))).toMatch(/ACKNOWLEDGED.*Acknowledged by \*alice\*/);

    // Bob's page was open before Alice acknowledged; his submit reports her ack and sends nothing.
    const late = await bob.submit(path, { name: 'bob' });
    expect(late.status).toBe(200);
    expect(bob.lastHtml).toMatch(/was already acknowledged/);
    expect(bob.lastHtml).toMatch(/Acknowledged by <strong><bdi>alice<\/bdi><\/strong>/);
    expect(slack().received).toHaveLength(2);
    expect(sns().received).toHaveLength(2);
  });

  it('takes each form nonce once: a replayed POST (same nonce, MAC and cookie) answers 409 and changes nothing', async () => {
    const path = await fire();
    const alice = new FormClient(h.app);
    await alice.open(path);
    const captured = { hidden: alice.hidden(), cookies: new Map(alice.cookies) };
    // A refused form (no silences without ALERTMANAGER_URL) does not spend its nonce: the form can be sent again.
    expect((await alice.submit(path, { name: 'alice', action: 'ack-silence', hours: '4' })).status).toBe(400);
    expect((await alice.submit(path, { name: 'alice' }, { hidden: captured.hidden })).status).toBe(200);
    const before = await h.scan();
    const received = slack().received.length;
    for (const name of ['mallory', 'alice']) {
      const replay = new FormClient(h.app);
      for (const [k, v] of captured.cookies) replay.cookies.set(k, v);
      const res = await replay.submit(path, { name }, { hidden: captured.hidden });
      expect(res.status).toBe(409);
      expect(await res.text()).toMatch(/This form was already sent/);
    }
    expect(await h.scan()).toBe(before);
    expect(slack().received).toHaveLength(received);
  });

  it('suppresses reminders, and the resolved message says who acked and how long it took', async () => {
    const path = await fire();
    const client = new FormClient(h.app);
    await client.open(path);
    await client.submit(path, { name: 'alice' });
    expect(await (await h.webhook(fixture('firing-kv-cache-critical'))).json()).toMatchObject({
      notified: 0,
      duplicates: 1,
    });
    const resolved = fixture('firing-kv-cache-critical');
    resolved.status = 'resolved';
    resolved.alerts[0]!.status = 'resolved';
    resolved.alerts[0]!.endsAt = '2026-11-29T13:00:00Z';
    await h.webhook(resolved);
    expect(slack().received.map((n) => `${n.kind ?? 'alert'}:${n.status}`)).toEqual([
      'alert:firing',
      'acknowledged:firing',
      'alert:resolved',
    ]);
    const last = slack().received[2]!;
    expect(last.acknowledgeUrl).toBeUndefined();
    expect(last.alerts[0]!.acknowledgement).toMatchObject({ by: 'alice' });
    expect(JSON.stringify(renderSlack(last))).toMatch(
      /Acknowledged by \*alice\* at .* UTC \(\d+ (d|h|min)[^)]* after it fired\)/,
    );
  });

  it('offers no silence without ALERTMANAGER_URL', async () => {
    const path = await fire();
    const client = new FormClient(h.app);
    await client.open(path);
    expect(client.lastHtml).not.toContain('Acknowledge and silence');
    expect((await client.submit(path, { action: 'ack-silence', hours: '4' })).status).toBe(400);
  });

  it('accepts links signed with the previous secret during its grace period', async () => {
    const old = new Secret('the-old-ack-secret-0123456789abcdef');
    const rotated = await ackHarness(db, {
      ACK_SECRET: 'the-new-ack-secret-0123456789abcdef',
      ACK_SECRET_PREVIOUS: old.reveal(),
      ACK_SECRET_PREVIOUS_UNTIL: new Date(Date.now() + 60_000).toISOString(),
    });
    await rotated.webhook(fixture('firing-kv-cache-critical'));
    const nowS = Math.ceil(Date.now() / 1000);
    const oldLink = `/v1/ack/${signAckToken({ fingerprints: [FP], group: 'g', channel: 'sns', issuedAt: nowS, expiresAt: nowS + 600 }, { current: old })}`;
    const client = new FormClient(rotated.app);
    expect((await client.open(oldLink)).status).toBe(200);
    expect((await client.submit(oldLink, { name: 'carol' })).status).toBe(200);
    expect(client.lastHtml).toMatch(/Acknowledged by <strong><bdi>carol<\/bdi><\/strong>.*from the sns link/s);
    rotated.advance(61_000);
    const retired = await rotated.app.request(oldLink);
    expect(retired.status).toBe(410);
    expect(await retired.text()).toMatch(/retired/);
  });
});

describe('GET /v1/alerts/:fingerprint', () => {
  it('needs the bearer token and returns the state and history', async () => {
    const path = await fire();
    const client = new FormClient(h.app);
    await client.open(path);
    await client.submit(path, { name: 'alice' });
    expect((await h.audit(FP, '')).status).toBe(401);
    expect((await h.audit(FP, 'wrong-token-0123456789')).status).toBe(401);
    expect((await h.audit('ffffffffffffffff')).status).toBe(404);
    const res = await h.audit(FP);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      record: { status: string; acknowledgement: { by: string } };
      history: { type: string }[];
    };
    expect(body.record).toMatchObject({
      status: 'firing',
      acknowledgement: { by: 'alice', channel: 'slack' },
      channels: ['slack', 'sns'],
    });
    expect(body.history.map((e) => e.type)).toEqual(['notified', 'acknowledged', 'follow-up']);
    expect(body.history[2]).toMatchObject({ channels: ['slack', 'sns'], failed: [] });
  });
});
