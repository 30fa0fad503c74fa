/**
 * The chart from a real message in a real browser, with real parts only: a real Prometheus back-filled
 * (promtool) with a GPU whose memory leaks; `npm start`'s entry (child process, embedded dynalite,
 * PUBLIC_URL, ACK_SECRET and PROMETHEUS_URL set) receives Alertmanager's webhook body and posts to a
 * loopback Slack. The Slack message carries an image block whose URL serves a PNG (fetched as Slack
 * does), and headless Debian Chromium (playwright-core, no downloaded browser) opens the Acknowledge
 * page and loads the same chart inline: `naturalWidth > 0`, a screenshot of it not blank, no console error.
 * Waits are bounded polls, never timings.
 */
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMetricsLine, startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';
import { requireBinaries } from '../helpers/binaries.js';
import { launchChromium, type HeadlessChromium } from '../helpers/chromium.js';
import { collectConsoleErrors } from '../helpers/phone-page.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { startPipelineProcess, type PipelineProcess } from '../helpers/pipeline-process.js';
import { colouredPixels, expectDrawnChart, pixelsNear } from '../helpers/png.js';
import { freePort, pollUntil } from '../helpers/processes.js';

const TOKEN = 'e2e-chart-token-0123456789abcdef';
const POLL = { deadlineMs: 45_000, intervalMs: 200 };
/** The fixture alert's GPU, as dcgm-exporter labels it. */
const GPU = { Hostname: 'gpu-node-1', gpu: '0', instance: '127.0.0.1:9800', job: 'vllm' };
const CAPACITY_MIB = 81_559;

interface SlackBody {
  blocks: { type: string; image_url?: string; alt_text?: string; elements?: { url?: string }[] }[];
}

/** Four hours of a leak of 1,500 MiB/h, every 15 s, ending `end` (Unix seconds). */
function leakOpenMetrics(end: number): string {
  const start = end - 4 * 3600;
  const used = (t: number) => Math.round(40_000 + (1500 * (t - start)) / 3600);
  const lines = ['# TYPE DCGM_FI_DEV_FB_USED gauge'];
  for (let t = start; t <= end; t += 15) lines.push(openMetricsLine('DCGM_FI_DEV_FB_USED', GPU, used(t), t));
  lines.push('# TYPE DCGM_FI_DEV_FB_FREE gauge');
  for (let t = start; t <= end; t += 15)
    lines.push(openMetricsLine('DCGM_FI_DEV_FB_FREE', GPU, CAPACITY_MIB - used(t), t));
  lines.push('# EOF', '');
  return lines.join('\n');
}

let prometheus: RunningPrometheus;
let slack: Loopback;
let pipeline: PipelineProcess;
let browser: HeadlessChromium;

beforeAll(async () => {
  requireBinaries();
  [prometheus, slack] = await Promise.all([
    startPrometheus(leakOpenMetrics(Math.floor(Date.now() / 1000) - 30)),
    startLoopback(),
  ]);
  const port = await freePort();
  pipeline = await startPipelineProcess({
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_TOKEN: TOKEN,
    SLACK_WEBHOOK_URL: `${slack.url}/services/T000/B000/chart-e2e`,
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    ACK_SECRET: 'e2e-chart-secret-0123456789abcdefghij',
    PROMETHEUS_URL: prometheus.url,
  });
  browser = await launchChromium('chart-e2e');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await pipeline?.stop();
  await Promise.allSettled([prometheus?.stop(), slack?.close()]);
});

describe('a chart in the message and on the acknowledgement page', () => {
  it('Slack gets an image block whose signed URL serves the PNG, and Chromium shows it on the page', async () => {
    const message = fixture('firing-gpu-memory-leak');
    message.alerts[0]!.startsAt = new Date(Date.now() - 30 * 60_000).toISOString();
    const posted = await fetch(`${pipeline.url}/v1/alertmanager`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(20_000),
    });
    expect(posted.status).toBe(200);

    const body = await pollUntil(
      async () => slack.requests.map((r) => JSON.parse(r.body.toString('utf8')) as SlackBody)[0],
      () => pipeline.out().slice(-3000),
      POLL,
    );
    const image = body.blocks.find((b) => b.type === 'image');
    expect(image?.image_url?.startsWith(`${pipeline.url}/v1/chart/`)).toBe(true);
    expect(image?.alt_text).toMatch(/^Chart: /);
    const ackUrl = body.blocks.find((b) => b.type === 'actions')?.elements?.[0]?.url;
    expect(ackUrl).toBeDefined();

    // As Slack fetches it: a plain GET, no cookie, no token header.
    const res = await fetch(image!.image_url!, { signal: AbortSignal.timeout(20_000) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    const png = expectDrawnChart(new Uint8Array(await res.arrayBuffer()));
    // The leak's fitted trend and its projection to capacity, in the trend colour (#6941c6).
    expect(pixelsNear(png, '#6941c6')).toBeGreaterThan(300);

    const page = await browser.newPage();
    const errors: string[] = [];
    collectConsoleErrors(page, errors);
    expect((await page.goto(ackUrl!))?.status()).toBe(200);
    const img = page.locator('img[src*="/v1/chart/"]');
    await img.scrollIntoViewIfNeeded();
    // Evaluated in the page (a string: this file is compiled without the DOM types).
    const loaded = `(() => { const el = document.querySelector('img[src*="/v1/chart/"]'); return el !== null && el.complete && el.naturalWidth; })()`;
    // Polled from here: waitForFunction evaluates its string with eval inside the page, which the page's
    // CSP (no 'unsafe-eval') refuses whenever the image is not loaded at the first check.
    const until = Date.now() + 30_000;
    while (!(Number(await page.evaluate(loaded)) > 0) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 50));
    expect(await page.evaluate(loaded)).toBe(800);
    const shot = PNG.sync.read(await img.screenshot());
    expect(colouredPixels(shot)).toBeGreaterThan(500);
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  }, 120_000);
});
