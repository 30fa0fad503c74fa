/**
 * The acknowledgement page as the place to decide, in-process on the real app, pipeline, ack runtime
 * and dynalite: each alert's evidence (when fired, at notification, now), likely cause, chart and
 * links, all escaped, a hostile runbook never linked, Prometheus down at GET time; and a storm
 * digest's one link: paged, acknowledging its whole alert set together, only it, not a later re-fire.
 */
import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAckToken } from '../../shared/ack/token.js';
import { enrichAlerts } from '../../shared/enrich/index.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { renderSlack } from '../../shared/channels/slack/index.js';
import { renderText } from '../../shared/render/text.js';
import { Secret } from '../../shared/core/secret.js';
import { silentLogger } from '../../shared/core/logger.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { fixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/processes.js';
import { ACK_SECRET, PUBLIC_URL, ackHarness, ackPath, FormClient, type AckHarness } from './ack-harness.js';
import { stormWebhook } from './storm-webhook.js';

const FP = '936e109b8c52c001';
const EVIL = `"'><script>alert(1)</script><img src=x onerror=alert(1)>`;

let db: LocalDynamoDb;
beforeAll(async () => {
  db = await startLocalDynamoDb('ack-page-0');
});
afterAll(async () => db.close());

/** The enrichment the message went out with: KV cache 40% when fired, 97% at notification, and a cause. */
const SENT: Enrichment = {
  status: 'enriched',
  kind: 'kv_cache',
  signals: [
    { name: 'kv_cache_usage_ratio', label: 'KV cache usage', value: 0.97, atStart: 0.4, unit: 'ratio', query: 'q1' },
    {
      name: 'preemptions_per_second',
      label: `Preemptions ${EVIL}`,
      value: 2.5,
      atStart: 0,
      unit: 'per_second',
      query: 'q2',
    },
  ],
  likelyCause: {
    rule: 'kv_cache_pressure',
    cause: `KV cache is tight ${EVIL}`,
    action: 'Lower --max-num-seqs or add replicas',
    evidence: ['KV cache usage 97% (≥ 90%)'],
  },
};
/** The same signals read again when the page opens. */
const NOW: Enrichment = {
  ...SENT,
  signals: [
    { ...SENT.signals[0]!, value: 0.99 },
    { ...SENT.signals[1]!, value: 4 },
  ],
};

const sentEnrichment = async (alerts: { fingerprint: string }[]) => new Map(alerts.map((a) => [a.fingerprint, SENT]));

/** The kv-cache fixture with a hostile annotation and runbook. */
function hostileFixture(runbook: string) {
  const body = fixture('firing-kv-cache-critical');
  body.alerts[0]!.annotations = { summary: `KV cache full ${EVIL}`, description: `Dump ${EVIL}`, runbook_url: runbook };
  return body;
}

async function openPage(h: AckHarness, body: unknown): Promise<{ html: string; status: number }> {
  expect((await h.webhook(body)).status).toBe(200);
  const res = await new FormClient(h.app).open(ackPath(h.channels[0]!.received[0]));
  return { html: await res.text(), status: res.status };
}

const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

describe('evidence, cause, chart and links', () => {
  it('shows each value when fired, at notification and now, the cause and what to try, all escaped', async () => {
    const h = await ackHarness(
      db,
      {},
      {},
      { enrich: sentEnrichment, page: { refresh: async (alerts) => new Map(alerts.map((a) => [a.fingerprint, NOW])) } },
    );
    const { html, status } = await openPage(h, hostileFixture('https://runbooks.example.com/kv?a=1&b=<2>'));
    expect(status).toBe(200);
    expect(html).toContain('<li><strong>KV cache usage</strong>: when fired 40% · <span title="');
    expect(html).toMatch(/at notification<\/span> 97% · now <strong>99%<\/strong><\/li>/);
    expect(html).toContain('Preemptions &quot;&#39;&gt;&lt;script&gt;');
    expect(html).toContain(
      '<h3>Likely cause (when notified)</h3><p><strong>KV cache is tight &quot;&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;',
    );
    expect(html).toContain('Try: Lower --max-num-seqs or add replicas');
    expect(html).toContain('Evidence: KV cache usage 97% (≥ 90%)');
    expect(html).not.toMatch(/<script|<img src=x|<[^>]*\sonerror=/);
    const links = hrefs(html);
    expect(links[0]).toBe(fixture('firing-kv-cache-critical').alerts[0]!.generatorURL);
    expect(links[1]).toBe('https://runbooks.example.com/kv?a=1&b=%3C2%3E');
    expect(links[2]).toMatch(/^http:\/\/alertmanager\.example\.com:9093\/#\/silences\/new\?filter=/);
    expect(links).toHaveLength(3);
  });

  it('never links a runbook_url that is not http(s), however it is spelled, nor one carrying credentials', async () => {
    for (const runbook of [
      'javascript:alert(document.cookie)',
      ' JaVaScRiPt:alert(1)',
      'java\tscript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:x',
      '/relative/runbook',
      'https://user:pw@runbooks.example.com/kv',
    ]) {
      const h = await ackHarness(db, {}, {}, { enrich: sentEnrichment });
      const { html } = await openPage(h, hostileFixture(runbook));
      const links = hrefs(html);
      expect(
        links.some((l) => /script:|^data:|^\//i.test(l.trim())),
        runbook,
      ).toBe(false);
      expect(links).toHaveLength(2); // the graph and the silence form
      expect(html).not.toContain('>Runbook</a>');
    }
  });

  it('shows the chart (its signed URL) and the Grafana link when they are configured, and allows images from the chart route only', async () => {
    const h = await ackHarness(
      db,
      {},
      {},
      {
        enrich: sentEnrichment,
        page: {
          charts: { publicUrl: PUBLIC_URL, keys: { current: new Secret(ACK_SECRET) }, ttlSeconds: 3600 },
          grafanaUrl: 'https://grafana.example.com/g',
        },
      },
    );
    expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(200);
    const res = await new FormClient(h.app).open(ackPath(h.channels[0]!.received[0]));
    expect(res.headers.get('content-security-policy')).toContain('img-src https://ack.example.com/v1/chart/;');
    const html = await res.text();
    expect(html).toMatch(
      /<figure><img src="https:\/\/ack\.example\.com\/v1\/chart\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.png" alt="Chart of VLLMKVCacheNearlyFull/,
    );
    const from = Date.parse('2026-11-29T12:42:23.143Z') - 3_600_000;
    expect(html).toContain(
      `<a href="https://grafana.example.com/g/d/vllm-fleet/vllm-fleet?var-model=qwen3-8b&amp;var-instance=127.0.0.1%3A9800&amp;from=${from}&amp;to=${from + 7_200_000}" rel="noopener noreferrer">Grafana</a>`,
    );
  });

  it('opens while Prometheus is down: the values kept from the notification, and why "now" is missing', async () => {
    const deadPort = await freePort();
    const refresh = (alerts: Parameters<typeof enrichAlerts>[0]) =>
      enrichAlerts(alerts, {
        prometheusUrl: `http://127.0.0.1:${deadPort}`,
        timeoutMs: 2000,
        memoryTrendWindowHours: 6,
        logger: silentLogger,
      });
    const h = await ackHarness(db, {}, {}, { enrich: sentEnrichment, page: { refresh } });
    const { html, status } = await openPage(h, fixture('firing-kv-cache-critical'));
    expect(status).toBe(200);
    expect(html).toMatch(/at notification<\/span> 97%<\/li>/);
    expect(html).toMatch(
      /Values now: unavailable \(Prometheus unreachable[^;]*\); shown as kept from the notification\./,
    );
    expect(html).toContain('<form method="post">');
  });

  it('shows "now" for every alert of a storm page (12, and a full page of 20), read in one refresh per page', async () => {
    for (const [size, shown] of [
      [12, 12],
      [45, 20],
    ] as const) {
      const calls: number[] = [];
      const refresh = async (alerts: { fingerprint: string }[]) => {
        calls.push(alerts.length);
        return new Map(alerts.map((a) => [a.fingerprint, NOW]));
      };
      const h = await ackHarness(db, {}, {}, { enrich: sentEnrichment, page: { refresh } });
      expect((await h.webhook(stormWebhook(size))).status).toBe(200);
      const html = await (await new FormClient(h.app).open(ackPath(h.channels[0]!.received[0]))).text();
      expect(html.match(/now <strong>99%<\/strong>/g)).toHaveLength(shown);
      expect(calls).toEqual([shown]);
      // The button says what it does: every alert of the link, not only this page's (docs/acknowledging.md: "Acknowledge all N").
      expect(html).toContain(`<h1>Acknowledge ${size} alerts</h1>`);
      expect(html).toContain(`>Acknowledge all ${size}</button>`);
    }
  }, 120_000);

  it('reads the values now once a minute per page, however many GETs (scanners and unfurlers fetch links too)', async () => {
    let calls = 0;
    const refresh = async (alerts: { fingerprint: string }[]) => {
      calls++;
      return new Map(alerts.map((a) => [a.fingerprint, NOW]));
    };
    const h = await ackHarness(db, {}, {}, { enrich: sentEnrichment, page: { refresh } });
    expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(200);
    const path = ackPath(h.channels[0]!.received[0]);
    const pages = await Promise.all(Array.from({ length: 5 }, () => new FormClient(h.app).open(path)));
    for (const page of pages) expect(await page.text()).toMatch(/now <strong>99%<\/strong>/);
    await new FormClient(h.app).open(path);
    expect(calls).toBe(1);
    h.advance(61_000);
    await new FormClient(h.app).open(path);
    expect(calls).toBe(2);
  });

  it('says when the values now point to another cause than the message gave', async () => {
    const other: Enrichment = {
      ...NOW,
      likelyCause: {
        rule: 'queue_backlog',
        cause: 'Requests are queueing',
        action: 'Add capacity',
        evidence: ['waiting 40'],
      },
    };
    const h = await ackHarness(
      db,
      {},
      {},
      {
        enrich: sentEnrichment,
        page: { refresh: async (alerts) => new Map(alerts.map((a) => [a.fingerprint, other])) },
      },
    );
    const { html } = await openPage(h, fixture('firing-kv-cache-critical'));
    expect(html).toContain('<h3>Likely cause (when notified)</h3><p><strong>KV cache is tight');
    expect(html).toContain('<h3>Now the evidence points to</h3><p><strong>Requests are queueing</strong>');
  });
});

describe('what the form offers', () => {
  it('offers no form once the only alert fired again after the link was issued (refiredAt), as the POST would refuse it', async () => {
    const h = await ackHarness(db);
    expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(200);
    const path = ackPath(h.channels[0]!.received[0]);
    const alert = fixture('firing-kv-cache-critical').alerts[0]!;
    const common = { groupKey: 'g', externalURL: '', channels: ['slack'] };
    h.advance(5 * 60_000);
    await h.runtime.tracker.stores.records.recordNotified(
      { ...common, alert: { ...alert, status: 'resolved', endsAt: new Date(h.now()).toISOString() } },
      h.now(),
    );
    h.advance(60_000);
    await h.runtime.tracker.stores.records.recordNotified({ ...common, alert, generation: 1 }, h.now());
    const html = await (await new FormClient(h.app).open(path)).text();
    expect(html).toContain('Nothing is left to acknowledge here.');
    expect(html).not.toContain('<form');
  });
});

describe('a storm digest: one link for all its alerts', () => {
  const STORM = 60;
  /** Storm tests write and acknowledge dozens of records on dynalite: slow on a loaded machine, never timed. */
  const STORM_TIMEOUT_MS = 120_000;

  async function storm(): Promise<{ h: AckHarness; path: string }> {
    const h = await ackHarness(db);
    expect((await h.webhook(stormWebhook(STORM))).status).toBe(200);
    const digest = h.channels[0]!.received[0]!;
    return { h, path: ackPath(digest) };
  }

  it(
    'carries the Acknowledge link in the Slack and text digests; its token names a stored set of every firing alert',
    async () => {
      const { h, path } = await storm();
      const digest = h.channels[0]!.received[0]!;
      const slack = renderSlack(digest);
      expect(slack.blocks[0]!.type).toBe('header');
      expect(slack.blocks[1]).toMatchObject({
        type: 'actions',
        elements: [{ url: digest.acknowledgeUrl, action_id: 'acknowledge' }],
      });
      expect(renderText(h.channels[1]!.received[0]!).split('\n')[1]).toBe(
        `Acknowledge: ${h.channels[1]!.received[0]!.acknowledgeUrl}`,
      );
      const claims = verifyAckToken(path.split('/').pop()!, { current: new Secret(ACK_SECRET) }, h.now());
      expect(claims.set).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), alerts: STORM });
      expect(claims.fingerprints).toHaveLength(50);
      expect(digest.acknowledgeUrl!.length).toBeLessThan(3000);
    },
    STORM_TIMEOUT_MS,
  );

  it(
    'lists the alerts a page at a time, changing nothing',
    async () => {
      const { h, path } = await storm();
      const before = await h.scan();
      const client = new FormClient(h.app);
      const first = await (await client.open(path)).text();
      expect(first).toContain('<h1>Acknowledge 60 alerts</h1>');
      expect(first).toContain('Page 1 of 3 · <a href="?page=2">Next →</a>');
      expect(first).toContain('>Acknowledge all 60</button>');
      expect(first.match(/<section><h2>/g)).toHaveLength(20);
      expect(first).toContain('model-0: ');
      const last = await (await client.open(`${path}?page=3`)).text();
      expect(last).toContain('<a href="?page=2">← Previous</a> · Page 3 of 3</nav>');
      expect(last.match(/<section><h2>/g)).toHaveLength(20);
      expect(last).toContain('10.0.0.59:8000');
      for (const odd of ['0', '-1', '999', 'x', '1e3'])
        expect((await client.open(`${path}?page=${odd}`)).status).toBe(200);
      expect(await h.scan()).toBe(before);
    },
    STORM_TIMEOUT_MS,
  );

  it(
    'falls back to the alerts the link names when its set is gone, and says so',
    async () => {
      const { h, path } = await storm();
      const claims = verifyAckToken(path.split('/').pop()!, { current: new Secret(ACK_SECRET) }, h.now());
      await db.client.send(
        new DeleteItemCommand({ TableName: h.tableName, Key: { pk: { S: `set#${claims.set!.id}` } } }),
      );
      const client = new FormClient(h.app);
      const html = await (await client.open(path)).text();
      expect(html).toContain(
        'This link&#39;s list of 60 alerts could not be read; shown and acknowledged here: the 50 it names itself.',
      );
      const res = await client.submit(path, { name: 'dave' });
      expect(await res.text()).toContain('<strong>50 alerts</strong>: 50 acknowledged');
    },
    STORM_TIMEOUT_MS,
  );

  it(
    'acknowledges all its alerts in one POST, and only them: not another group, not a later alert of its group, not a re-fire after the link',
    async () => {
      const { h, path } = await storm();
      // Another group, and a later alert of the same group (another message, its own link).
      expect((await h.webhook(fixture('firing-kv-cache-critical'))).status).toBe(200);
      const later = stormWebhook(1);
      later.alerts[0]!.fingerprint = 'later00000000001';
      expect((await h.webhook(later)).status).toBe(200);
      // One of the digest's alerts resolves and fires again after the link was issued (generation 1).
      h.advance(5 * 60_000);
      const refired = stormWebhook(STORM).alerts[7]!;
      const store = h.runtime.tracker.stores.records;
      const common = { groupKey: '{}:{cluster="prod-eu"}', externalURL: '', channels: ['slack'] };
      await store.recordNotified(
        { ...common, alert: { ...refired, status: 'resolved', endsAt: new Date(h.now()).toISOString() } },
        h.now(),
      );
      h.advance(60_000);
      await store.recordNotified({ ...common, alert: refired, generation: 1 }, h.now());

      const client = new FormClient(h.app);
      await client.open(`${path}?page=3`);
      const res = await client.submit(`${path}?page=3`, { name: 'carol' });
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).toContain(
        '<strong>60 alerts</strong>: 59 acknowledged · 1 has fired again since this link was sent; use the newer message',
      );

      const records = await store.getMany(
        stormWebhook(STORM).alerts.map((a) => a.fingerprint),
        h.now(),
      );
      const acked = [...records.values()].filter((r) => r.acknowledgement?.by === 'carol');
      expect(acked).toHaveLength(STORM - 1);
      expect(records.get(refired.fingerprint)!.acknowledgement).toBeUndefined();
      expect((await store.get(FP, h.now()))!.acknowledgement).toBeUndefined();
      expect((await store.get('later00000000001', h.now()))!.acknowledgement).toBeUndefined();
      // The audit trail names who, per alert.
      const history = (await (await h.audit(stormWebhook(STORM).alerts[50]!.fingerprint)).json()) as {
        history: { type: string; by?: string; channel?: string }[];
      };
      expect(history.history).toContainEqual(
        expect.objectContaining({ type: 'acknowledged', by: 'carol', channel: 'slack' }),
      );
      // One follow-up per channel for the whole set.
      expect(h.channels[0]!.received.filter((n) => n.kind === 'acknowledged')).toHaveLength(1);
    },
    STORM_TIMEOUT_MS,
  );
});
