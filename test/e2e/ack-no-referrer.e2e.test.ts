/**
 * Behind a reverse proxy that adds `Referrer-Policy: no-referrer` to every answer (a common hardening
 * snippet), headless Chromium posts the page's own form with `Origin: null` and `Sec-Fetch-Site:
 * same-origin`. That combination, with the signed nonce and its cookie, acknowledges; the same form
 * posted from another site (a page on another origin whose form targets ours) is still refused. An alert
 * from Grafana's webhook contact point (a Grafana 11.3 body) goes the same way: delivered, its values and
 * Grafana's links on the page, acknowledged. The service runs as `npm start`'s entry; waits are bounded polls.
 */
import type { Page } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import { startPrefixProxy, type PrefixProxy } from '../helpers/prefix-proxy.js';
import { freePort, pollUntil } from '../helpers/processes.js';
import { requireBinaries } from '../helpers/binaries.js';
import { launchChromium, type HeadlessChromium } from '../helpers/chromium.js';

const PREFIX = '/alerts';
const TOKEN = 'e2e-no-referrer-token-0123456789abcdef';
const STEP_TIMEOUT_MS = 60_000;
const POLL = { deadlineMs: 30_000, intervalMs: 100 };

interface SlackBody {
  blocks: { type: string; text?: { text: string }; elements?: { url?: string }[] }[];
}

let slack: Loopback;
let proxy: PrefixProxy;
let pipeline: PipelineProcess;
let browser: HeadlessChromium;
/** Another site: serves a page whose form posts to the acknowledgement URL it is given. */
let elsewhere: Server;
let elsewhereUrl: string;
let target = '';

const bodies = (): SlackBody[] => slack.requests.map((r) => JSON.parse(r.body.toString('utf8')) as SlackBody);
const context = () =>
  `proxy: ${JSON.stringify(proxy.requests.map((r) => `${r.method} ${r.path} ${r.status} ${r.origin} ${r.secFetchSite}`))}\npipeline:\n${pipeline.out().slice(-3000)}`;

async function webhook(body: unknown): Promise<void> {
  const res = await fetch(`${proxy.url}${PREFIX}/v1/alertmanager`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function buttonUrl(alertname: string): Promise<string> {
  return pollUntil(
    async () =>
      bodies()
        .find((b) => JSON.stringify(b).includes(alertname) && /FIRING/.test(b.blocks[0]?.text?.text ?? ''))
        ?.blocks.find((b) => b.type === 'actions')?.elements?.[0]?.url,
    context,
    POLL,
  );
}

async function openPage(url: string): Promise<Page> {
  const page = await browser.newPage();
  const response = await page.goto(url);
  expect(response?.status(), await response?.text()).toBe(200);
  expect(response?.headers()['referrer-policy']).toBe('no-referrer');
  return page;
}

beforeAll(async () => {
  requireBinaries();
  const port = await freePort();
  [slack, proxy] = await Promise.all([
    startLoopback(),
    startPrefixProxy(`http://127.0.0.1:${port}`, PREFIX, { responseHeaders: { 'referrer-policy': 'no-referrer' } }),
  ]);
  pipeline = await startPipelineProcess({
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_TOKEN: TOKEN,
    SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/no-referrer-e2e`,
    PUBLIC_URL: `${proxy.url}${PREFIX}`,
    ACK_SECRET: 'e2e-no-referrer-ack-secret-0123456789abcdef',
  });
  elsewhere = createServer((_req, res) => {
    // The forged form copies nothing it cannot know: no nonce, no MAC; the browser decides the rest.
    res.writeHead(200, { 'content-type': 'text/html', 'referrer-policy': 'no-referrer' });
    res.end(
      `<form method="post" action="${target}"><input name="name" value="mallory"><button value="ack" name="action">go</button></form>`,
    );
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, 'localhost', resolve));
  elsewhereUrl = `http://localhost:${(elsewhere.address() as AddressInfo).port}/`;
  browser = await launchChromium('ack-no-referrer');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await pipeline?.stop();
  await Promise.allSettled([
    slack?.close(),
    proxy?.close(),
    new Promise<void>((resolve) => (elsewhere ? elsewhere.close(() => resolve()) : resolve())),
  ]);
});

describe('behind a proxy that adds Referrer-Policy: no-referrer', () => {
  it(
    "acknowledges from the page's own form, which Chromium posts with Origin: null and Sec-Fetch-Site: same-origin",
    async () => {
      await webhook(fixture('firing-queue-backlog-two-models'));
      const page = await openPage(await buttonUrl('VLLMQueueBacklog'));
      await page.fill('input[name="name"]', 'alice');
      await Promise.all([page.waitForNavigation(), page.click('button[value="ack"]')]);
      const text = (await page.textContent('main')) ?? '';
      await page.close();
      const post = proxy.requests.find((r) => r.method === 'POST' && r.path.startsWith(`${PREFIX}/v1/ack/`));
      expect(post, context()).toMatchObject({ origin: 'null', secFetchSite: 'same-origin' });
      expect(text, context()).toMatch(/Acknowledged by alice at .* from the slack link/);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'still refuses the same post from another site (Origin: null there too, but Sec-Fetch-Site: cross-site)',
    async () => {
      await webhook(fixture('firing-kv-cache-critical'));
      target = await buttonUrl('VLLMKVCacheNearlyFull');
      const page = await browser.newPage();
      await page.goto(elsewhereUrl);
      const [response] = await Promise.all([page.waitForNavigation(), page.click('button')]);
      const text = (await page.textContent('body')) ?? '';
      await page.close();
      const post = proxy.requests.findLast((r) => r.method === 'POST');
      expect(post, context()).toMatchObject({ origin: 'null', secFetchSite: 'cross-site' });
      expect(response?.status()).toBe(403);
      expect(text).toMatch(/another site/);
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "acknowledges an alert Grafana sent, showing Grafana's values and its silence form",
    async () => {
      const body = JSON.parse(
        readFileSync(new URL('../fixtures/grafana/grafana-11.3-firing-kv-cache.json', import.meta.url), 'utf8'),
      ) as unknown;
      await webhook(body);
      const page = await openPage(await buttonUrl('vLLM KV cache nearly full'));
      const shown = (await page.textContent('main')) ?? '';
      expect(shown).toContain('B=0.9731 · C=1');
      expect(await page.getAttribute('a:text("Silence in Grafana")', 'href')).toContain(
        'grafana.example.com:3000/alerting/silence/new?alertmanager=grafana',
      );
      await page.fill('input[name="name"]', 'bob');
      await Promise.all([page.waitForNavigation(), page.click('button[value="ack"]')]);
      const text = (await page.textContent('main')) ?? '';
      await page.close();
      expect(text, context()).toMatch(/Acknowledged by bob at .* from the slack link/);
    },
    STEP_TIMEOUT_MS,
  );
});
