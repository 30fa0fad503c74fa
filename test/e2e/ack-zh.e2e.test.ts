/**
 * The acknowledgement page from a Chinese channel's link (a Feishu card: the link's token says zh-CN),
 * on a phone: headless Debian Chromium at 375 × 740 CSS pixels, the real app on a loopback socket, the
 * ack runtime on dynalite, `TIME_ZONE=Asia/Shanghai`. The page is in Chinese (no English phrase of the
 * pipeline's own: alert text, label values and the terms of the trade excepted), its times are in the
 * configured zone and say so, nothing is wider than the screen, and its form acknowledges.
 */
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Enrichment } from '../../shared/enrich/types.js';
import { setTimeZone } from '../../shared/render/format.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import type { HeadlessChromium } from '../helpers/chromium.js';
import { fixture } from '../helpers/fixtures.js';
import { freePort } from '../helpers/processes.js';
import { closeServer, expectFitsWidth, launchPhone, openPage, serveOnLoopback } from '../helpers/phone-page.js';
import { ackHarness, type AckHarness } from '../integration/ack-harness.js';

const STEP_TIMEOUT_MS = 180_000;

/** What the shipped kv_cache_pressure rule finds: the page words it again in Chinese from the same values. */
const ENRICHED: Enrichment = {
  status: 'enriched',
  kind: 'kv_cache',
  signals: [
    {
      name: 'kv_cache_usage_ratio',
      label: 'KV cache usage',
      value: 0.97,
      atStart: 0.4,
      unit: 'ratio',
      query: 'max(vllm:kv_cache_usage_perc)',
    },
    { name: 'preemptions_per_second', label: 'Preemptions', value: 1.5, unit: 'per_second', query: 'q' },
  ],
  likelyCause: {
    rule: 'kv_cache_pressure',
    cause: 'KV-cache pressure: the cache is nearly full and the scheduler preempts running requests to make room.',
    action: 'Give the KV cache more memory (--gpu-memory-utilization)',
    evidence: ['KV cache usage 97% (≥ 90%)', 'Preemptions 1.5/s (> 0)'],
  },
};

/** Words an ops engineer reads in English in a Chinese page too (names of things, units, flags). */
const TERMS = /KV cache|TTFT|Prometheus|Alertmanager|Grafana|prefill|decode|batch|token|vLLM|GPU|--[a-z-]+/g;

let db: LocalDynamoDb;
let h: AckHarness;
let server: Server;
let browser: HeadlessChromium;
const consoleErrors: string[] = [];

beforeAll(async () => {
  db = await startLocalDynamoDb('ack-zh-e2e');
  const port = await freePort();
  // What createDeps does at start from TIME_ZONE; the harness builds the app without it.
  setTimeZone('Asia/Shanghai');
  h = await ackHarness(
    db,
    { PUBLIC_URL: `http://127.0.0.1:${port}`, TIME_ZONE: 'Asia/Shanghai' },
    {},
    { enrich: async (alerts) => new Map(alerts.map((a) => [a.fingerprint, ENRICHED])) },
  );
  h.channels[0]!.locale = 'zh-CN';
  server = await serveOnLoopback(h.app, port);
  // An English browser: the link, not the browser, makes the page Chinese.
  browser = await launchPhone('ack-zh', 'en-US');
}, 120_000);

const open = (url: string) => openPage(browser, url, consoleErrors);

afterAll(async () => {
  setTimeZone('UTC');
  await browser?.close();
  await closeServer(server);
  await db?.close();
});

/**
 * The page's visible text without what the alert itself brought (its labels, annotations) and the
 * terms of the trade: what is left must hold no run of two or more English words.
 */
function englishPhrases(text: string, alertText: string[]): string[] {
  let rest = text;
  for (const t of [...alertText].sort((a, b) => b.length - a.length)) rest = rest.split(t).join(' ');
  rest = rest.replace(TERMS, ' ');
  return rest.match(/[A-Za-z]{2,}(?:[ \t]+[A-Za-z]{2,})+/g) ?? [];
}

describe('the acknowledgement page from a zh-CN link', () => {
  it(
    'is in Chinese at phone width, in the configured time zone, and its form acknowledges',
    async () => {
      const body = fixture('firing-kv-cache-critical');
      const alert = body.alerts[0]!;
      expect((await h.webhook(body)).status).toBe(200);
      const url = h.channels[0]!.received.at(-1)!.acknowledgeUrl!;
      const page = await open(url);
      await expectFitsWidth(page);
      expect(await page.getAttribute('html', 'lang')).toBe('zh-CN');
      const text = (await page.textContent('body')) ?? '';
      expect(text).toContain('KV cache 压力大');
      expect(text).toContain('KV cache 使用率');
      // 12:42:23 UTC is 20:42:23 in Shanghai, and the page says which zone.
      expect(text).toContain('2026-11-29 20:42:23 Asia/Shanghai');
      expect(text).not.toContain(' UTC');
      const alertText = [...Object.entries(alert.labels).flat(), ...Object.values(alert.annotations), body.receiver];
      expect(englishPhrases(text, alertText)).toEqual([]);

      await page.fill('input[name="name"]', '张伟');
      await Promise.all([page.waitForNavigation(), page.tap('button[value="ack"]')]);
      const after = (await page.textContent('body')) ?? '';
      expect(after).toContain('张伟');
      expect(englishPhrases(after, alertText)).toEqual([]);
      await expectFitsWidth(page);
      await page.close();
      expect((await h.runtime.tracker.stores.records.get(alert.fingerprint, h.now()))?.acknowledgement?.by).toBe(
        '张伟',
      );
      expect(consoleErrors).toEqual([]);
    },
    STEP_TIMEOUT_MS,
  );
});
