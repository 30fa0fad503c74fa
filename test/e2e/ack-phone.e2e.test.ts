/**
 * The acknowledgement page on a phone: headless Debian Chromium (playwright-core, no downloaded
 * browser) at 375 × 740 CSS pixels, touch and mobile viewport, opening links from messages the real
 * app sent (in-process app on a loopback socket, ack runtime on dynalite). Asserts nothing is wider
 * than the screen (long label values, the evidence, the links), the text is readable, the content
 * security policy is never violated (no console error), and the forms work: one alert, and a storm
 * digest paged and acknowledged together. Waits are navigations, never timings.
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Enrichment } from '../../shared/enrich/types.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import type { HeadlessChromium } from '../helpers/chromium.js';
import { fixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/processes.js';
import { closeServer, expectFitsWidth, launchPhone, openPage, PHONE, serveOnLoopback } from '../helpers/phone-page.js';
import { ackHarness, type AckHarness } from '../integration/ack-harness.js';
import { stormWebhook } from '../integration/storm-webhook.js';

const STEP_TIMEOUT_MS = 180_000;
/** The storm's POST acknowledges 60 records on dynalite: slow on a loaded machine (a ceiling, not a timing). */
const NAVIGATION_TIMEOUT_MS = 120_000;

const ENRICHED: Enrichment = {
  status: 'enriched',
  kind: 'kv_cache',
  signals: [
    { name: 'kv_cache_usage_ratio', label: 'KV cache usage', value: 0.97, atStart: 0.4, unit: 'ratio', query: 'q' },
  ],
  likelyCause: {
    rule: 'kv_cache_pressure',
    cause: 'KV cache is tight: sequences are preempted',
    action: 'Lower --max-num-seqs, or add replicas',
    evidence: ['KV cache usage 97% (≥ 90%)'],
  },
};

let db: LocalDynamoDb;
let h: AckHarness;
let server: Server;
let browser: HeadlessChromium;
const consoleErrors: string[] = [];

beforeAll(async () => {
  db = await startLocalDynamoDb('ack-phone-e2e');
  const port = await freePort();
  h = await ackHarness(
    db,
    { PUBLIC_URL: `http://127.0.0.1:${port}` },
    {},
    {
      enrich: async (alerts) => new Map(alerts.map((a) => [a.fingerprint, ENRICHED])),
      page: {
        refresh: async (alerts) =>
          new Map(
            alerts.map((a) => [a.fingerprint, { ...ENRICHED, signals: [{ ...ENRICHED.signals[0]!, value: 0.99 }] }]),
          ),
      },
    },
  );
  server = await serveOnLoopback(h.app, port);
  browser = await launchPhone('ack-phone');
}, 120_000);

const open = (url: string) => openPage(browser, url, consoleErrors);

afterAll(async () => {
  await browser?.close();
  await closeServer(server);
  await db?.close();
});

describe('the acknowledgement page at phone width', () => {
  it(
    "shows one alert's evidence, cause and links without horizontal scroll, and its form acknowledges",
    async () => {
      const body = fixture('firing-kv-cache-critical');
      const alert = body.alerts[0]!;
      // Long unbroken values: a pod name, a runbook URL with a long query.
      alert.labels.pod = `vllm-qwen3-8b-${'x'.repeat(120)}`;
      alert.annotations.runbook_url = `https://runbooks.example.com/vllm/kv-cache?${'section=memory&'.repeat(20)}`;
      expect((await h.webhook(body)).status).toBe(200);
      const page = await open(h.channels[0]!.received.at(-1)!.acknowledgeUrl!);
      await expectFitsWidth(page);
      const text = (await page.textContent('main')) ?? '';
      expect(text).toContain('KV cache usage: when fired 40% · at notification 97% · now 99%');
      expect(text).toContain('KV cache is tight: sequences are preempted');
      expect(text).toContain('Try: Lower --max-num-seqs, or add replicas');
      expect(await page.locator('.links a').allTextContents()).toEqual(['Graph', 'Runbook', 'Silence in Alertmanager']);
      const fontPx = (await page.evaluate('Number.parseFloat(getComputedStyle(document.body).fontSize)')) as number;
      expect(fontPx).toBeGreaterThanOrEqual(16);
      const button = (await page.locator('button[value="ack"]').boundingBox())!;
      expect(button.x + button.width).toBeLessThanOrEqual(PHONE.width);
      expect(button.height).toBeGreaterThanOrEqual(32);

      await page.fill('input[name="name"]', 'dana');
      await Promise.all([page.waitForNavigation(), page.tap('button[value="ack"]')]);
      expect((await page.textContent('main')) ?? '').toMatch(/Acknowledged by dana at .* from the slack link/);
      await expectFitsWidth(page);
      await page.close();
      expect((await h.runtime.tracker.stores.records.get(alert.fingerprint, h.now()))?.acknowledgement?.by).toBe(
        'dana',
      );
      expect(consoleErrors).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "pages a storm digest's alerts and acknowledges them all with one tap",
    async () => {
      const storm = stormWebhook(60);
      expect((await h.webhook(storm)).status).toBe(200);
      const digest = h.channels[0]!.received.at(-1)!;
      const page = await open(digest.acknowledgeUrl!);
      await expectFitsWidth(page);
      expect(await page.locator('h1').textContent()).toBe('Acknowledge 60 alerts');
      await Promise.all([page.waitForNavigation(), page.locator('nav.pages a', { hasText: 'Next' }).first().tap()]);
      expect(new URL(page.url()).search).toBe('?page=2');
      expect(await page.locator('nav.pages').first().textContent()).toContain('Page 2 of 3');
      await expectFitsWidth(page);
      await page.fill('input[name="name"]', 'erin');
      await Promise.all([page.waitForNavigation({ timeout: NAVIGATION_TIMEOUT_MS }), page.tap('button[value="ack"]')]);
      expect((await page.textContent('main')) ?? '').toContain('60 alerts: 60 acknowledged');
      await expectFitsWidth(page);
      await page.close();
      const records = await h.runtime.tracker.stores.records.getMany(
        storm.alerts.map((a) => a.fingerprint),
        h.now(),
      );
      expect([...records.values()].filter((r) => r.acknowledgement?.by === 'erin')).toHaveLength(60);
      expect(consoleErrors).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );
});
