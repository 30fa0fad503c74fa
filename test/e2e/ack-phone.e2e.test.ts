/**
 * The acknowledgement page on a phone: headless Debian Chromium (playwright-core, no downloaded
 * browser) at 375 × 740 CSS pixels, touch and mobile viewport, opening links from messages the real
 * app sent (in-process app on a loopback socket, ack runtime on dynalite). Asserts nothing is wider
 * than the screen (long label values, the evidence, the links), the text is readable, the content
 * security policy is never violated (no console error), and the forms work: one alert, and a storm
 * digest paged and acknowledged together. Waits are navigations, never timings.
 */
import type { Server } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Enrichment } from '../../shared/enrich/types.js';
import { serveApp } from '../../shared/http/server.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { launchChromium, type HeadlessChromium } from '../helpers/chromium.js';
import { fixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/processes.js';
import { ackHarness, type AckHarness } from '../integration/ack-harness.js';
import { stormWebhook } from '../integration/storm-webhook.js';

const PHONE = { width: 375, height: 740 };
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
  await new Promise<void>((resolve) => {
    server = serveApp(h.app, { port, hostname: '127.0.0.1' }, () => resolve());
  });
  browser = await launchChromium('ack-phone', {
    viewport: PHONE,
    isMobile: true,
    hasTouch: true,
    deviceScaleFactor: 2,
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await db?.close();
});

async function open(url: string): Promise<Page> {
  const page = await browser.newPage();
  // The browser's own favicon request is not the page's (the service serves none).
  page.on(
    'console',
    (m) =>
      void (
        m.type() === 'error' &&
        !m.location().url.endsWith('/favicon.ico') &&
        consoleErrors.push(`${m.text()} ${m.location().url}`)
      ),
  );
  const res = await page.goto(url);
  expect(res?.status()).toBe(200);
  return page;
}

/** Nothing on the page is wider than the phone's screen: no horizontal scroll. */
async function expectFitsWidth(page: Page): Promise<void> {
  // Evaluated in the page (as strings: this file is compiled without the DOM's types).
  const { scrollWidth, innerWidth } = (await page.evaluate(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
  )) as { scrollWidth: number; innerWidth: number };
  expect(innerWidth).toBe(PHONE.width);
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
  const overflowing = await page.evaluate(
    `[...document.querySelectorAll('main *')].filter((e) => e.getBoundingClientRect().right > ${PHONE.width} + 0.5).map((e) => e.outerHTML.slice(0, 80))`,
  );
  expect(overflowing).toEqual([]);
}

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
