/**
 * Deployed behind a reverse proxy under a path prefix (`PUBLIC_URL=http://proxy/alerts`, the proxy
 * strips `/alerts`), followed in headless Chromium from the Slack button: the link, the page, the
 * form's cookie and CSRF checks, Acknowledge, then Acknowledge-and-silence on a second message (the
 * remembered name, a silence in the real Alertmanager). Every request the browser makes must stay
 * under the prefix (the proxy answers 404 elsewhere) and none may be a redirect out of it. The
 * service runs as `npm start`'s entry; its `ACK_SECRET` ends in a newline, as a secret created from a
 * file does. Waits are bounded polls.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import { startPrefixProxy, type PrefixProxy } from '../helpers/prefix-proxy.js';
import { freePort, pollUntil, startAlertmanager, type RunningProcess } from '../helpers/processes.js';
import { requireBinaries } from '../helpers/binaries.js';
import { launchChromium, type HeadlessChromium } from '../helpers/chromium.js';

const PREFIX = '/alerts';
const TOKEN = 'e2e-prefix-token-0123456789abcdef';
const ACK_SECRET = 'e2e-prefix-ack-secret-0123456789abcdef';
const STEP_TIMEOUT_MS = 60_000;
const POLL = { deadlineMs: 30_000, intervalMs: 100 };

interface SlackBody {
  blocks: { type: string; text?: { text: string }; elements?: { url?: string }[] }[];
}

let slack: Loopback;
let proxy: PrefixProxy;
let alertmanager: RunningProcess;
let pipeline: PipelineProcess;
let browser: HeadlessChromium;
/** Every URL the browser requested, and every response status it got. */
const seen: { url: string; status?: number }[] = [];

const bodies = (): SlackBody[] => slack.requests.map((r) => JSON.parse(r.body.toString('utf8')) as SlackBody);
const context = () =>
  `proxy: ${JSON.stringify(proxy.requests.map((r) => `${r.method} ${r.path} ${r.status}`))}\npipeline:\n${pipeline.out().slice(-3000)}`;

/** Posts a webhook through the proxy, as an Alertmanager that reaches the service by its public URL would. */
async function webhook(body: unknown): Promise<void> {
  const res = await fetch(`${proxy.url}${PREFIX}/v1/alertmanager`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  expect(res.status, await res.clone().text()).toBe(200);
}

/** The Acknowledge button's URL of the `n`-th Slack message. */
async function buttonUrl(n: number): Promise<string> {
  return pollUntil(
    async () => bodies()[n]?.blocks.find((b) => b.type === 'actions')?.elements?.[0]?.url,
    context,
    POLL,
  );
}

async function openPage(url: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('request', (r) => void seen.push({ url: r.url() }));
  page.on('response', (r) => void seen.push({ url: r.url(), status: r.status() }));
  const response = await page.goto(url);
  expect(response?.status(), await response?.text()).toBe(200);
  return page;
}

beforeAll(async () => {
  requireBinaries();
  const port = await freePort();
  [slack, proxy] = await Promise.all([startLoopback(), startPrefixProxy(`http://127.0.0.1:${port}`, PREFIX)]);
  // No alert reaches this Alertmanager: it serves the silences API.
  alertmanager = await startAlertmanager({ webhookUrl: `http://127.0.0.1:${await freePort()}/v1/alertmanager` });
  pipeline = await startPipelineProcess({
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_TOKEN: TOKEN,
    SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/prefix-e2e`,
    PUBLIC_URL: `${proxy.url}${PREFIX}`,
    ACK_SECRET: `${ACK_SECRET}\n`,
    ALERTMANAGER_URL: alertmanager.url,
  });
  browser = await launchChromium('ack-prefix');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await Promise.allSettled([alertmanager?.stop(), pipeline?.stop()]);
  await Promise.allSettled([slack?.close(), proxy?.close()]);
});

describe('behind a reverse proxy that strips a path prefix', () => {
  it('names the trimmed setting at start, never its value', () => {
    expect(pipeline.logs.filter((l) => l.event === 'setting adjusted').map((l) => l.setting)).toEqual(['ACK_SECRET']);
    expect(pipeline.out()).not.toContain(ACK_SECRET);
  });

  it(
    'acknowledges from the Slack button: link, page, cookie and CSRF checks all under the prefix',
    async () => {
      await webhook(fixture('firing-queue-backlog-two-models'));
      const url = await buttonUrl(0);
      expect(url.startsWith(`${proxy.url}${PREFIX}/v1/ack/`)).toBe(true);
      const page = await openPage(url);
      await expect(page.textContent('main')).resolves.toContain('Not acknowledged yet.');
      await page.fill('input[name="name"]', 'alice');
      await Promise.all([page.waitForNavigation(), page.click('button[value="ack"]')]);
      const text = (await page.textContent('main')) ?? '';
      await page.close();
      expect(text, context()).toMatch(/Acknowledged by alice at .* from the slack link/);
      const post = proxy.requests.find((r) => r.method === 'POST' && r.path.startsWith(`${PREFIX}/v1/ack/`));
      expect(post?.status).toBe(200);
      // The cookies the page sets are scoped to the public path, so the browser sends them back through the proxy.
      const cookies = proxy.requests.flatMap((r) => r.setCookie);
      expect(cookies.some((c) => c.startsWith('ack_csrf=') && c.includes(`Path=${PREFIX}/v1/ack/`))).toBe(true);
      expect(cookies.some((c) => c.startsWith('ack_name=') && c.includes(`Path=${PREFIX}/v1/ack`))).toBe(true);
      const followUp = await pollUntil(
        async () => bodies().find((b) => /^👀 ACKNOWLEDGED/.test(b.blocks[0]?.text?.text ?? '')),
        context,
        POLL,
      );
      expect(JSON.stringify(followUp)).toContain('Acknowledged by *alice*');
    },
    STEP_TIMEOUT_MS,
  );

  it(
    'acknowledges and silences from a second message, remembering the name',
    async () => {
      await webhook(fixture('firing-kv-cache-critical'));
      const url = await pollUntil(
        async () => {
          const i = bodies().findIndex(
            (b) => JSON.stringify(b).includes('VLLMKVCacheNearlyFull') && /FIRING/.test(b.blocks[0]?.text?.text ?? ''),
          );
          return i >= 0 ? buttonUrl(i) : undefined;
        },
        context,
        POLL,
      );
      const page = await openPage(url);
      expect(await page.inputValue('input[name="name"]')).toBe('alice');
      await page.selectOption('select[name="hours"]', '1');
      await Promise.all([page.waitForNavigation(), page.click('button[value="ack-silence"]')]);
      const text = (await page.textContent('main')) ?? '';
      await page.close();
      const silenceId = /silenced \(([0-9a-f-]{36})\)/.exec(text)?.[1];
      expect(silenceId, `${text}\n${context()}`).toBeDefined();
      const silences = (await (
        await fetch(`${alertmanager.url}/api/v2/silences`, { signal: AbortSignal.timeout(5000) })
      ).json()) as { id: string; createdBy: string }[];
      expect(silences.find((s) => s.id === silenceId)).toMatchObject({ createdBy: 'alice' });
    },
    STEP_TIMEOUT_MS,
  );

  it('kept the browser under the prefix: no request outside it, no redirect', () => {
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.filter((s) => !s.url.startsWith(`${proxy.url}${PREFIX}/`))).toEqual([]);
    expect(seen.filter((s) => s.status !== undefined && (s.status < 200 || s.status >= 300))).toEqual([]);
    expect(proxy.requests.filter((r) => r.status === 404 || (r.status >= 300 && r.status < 400))).toEqual([]);
  });
});
