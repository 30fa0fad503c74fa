/**
 * The routes people click, on the receiver as deployed (the default variant's `Receiver/Function` asset,
 * cold-started as Lambda runs it, its secrets in the settings secret): the acknowledgement page (GET,
 * then the same-origin form POST that acknowledges), the Slack app's signed Acknowledge button
 * (`POST /v1/slack/interactions`) and the chart image (a PNG drawn from a loopback Prometheus; a 503 PNG
 * when Prometheus is down). The page, the interactions and the charts are chunks that only
 * `await import()` reaches; the renderer's WebAssembly and font lie beside its chunk.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pixelmatch from 'pixelmatch';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { functionUrlEvent, functionUrlRequest } from '../../scripts/lambda-local.js';
import { slackSignature } from '../../shared/channels/slack/signature.js';
import { chartData, chartWindow } from '../../shared/chart/data.js';
import { renderChartPng, renderMessagePng } from '../../shared/chart/render.js';
import { setTimeZone } from '../../shared/core/time-zone.js';
import { chartWords } from '../../shared/chart/words.js';
import { ZH_FONT_BASE64 } from '../../shared/chart/zh-font.js';
import { Secret } from '../../shared/core/secret.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { matrixResponder, risingRatio } from '../helpers/chart.js';
import { fixture, fixtureText } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { expectDrawnChart } from '../helpers/png.js';
import { SLACK_CHANNEL_ID, startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';
import { startSnsPlatform, type SnsPlatform } from '../integration/channels/platforms.js';
import { startSecretsManager, type SecretsManagerStandIn } from './assembly/aws-stand-ins.js';
import { chunkCoverage } from './assembly/chunks.js';
import { expectClaimedChunksRan } from './assembly/claims.js';
import { deployed, deployedFunction } from './assembly/deployed.js';
import { invokeDeployed, templateEnvironment } from './assembly/invoke.js';

const TOKEN = 'deployed-routes-token-0123456789abcdef';
const ACK_SECRET = 'deployed-routes-ack-secret-0123456789abcdef';
const SIGNING_SECRET = 'deployed-routes-signing-secret-0123';
const BOT_TOKEN = 'xoxb-0000000000-deployed-routes';
const PUBLIC_URL = 'https://alerts.example.com';
/** The first pixel row below the time axis's labels: only the axis's name is drawn from here down. */
const AXIS_NAME_ROW = 341;

describe('the deployed receiver serves the acknowledgement page, Slack interactions and charts', () => {
  const receiver = deployedFunction('default', 'Receiver/Function');
  const env = templateEnvironment(receiver, deployed('default').template.Resources);
  const coverage = chunkCoverage(receiver);
  let db: LocalDynamoDb;
  let secrets: SecretsManagerStandIn;
  let slack: FakeSlackApi;
  let sns: SnsPlatform;
  let prometheus: Loopback;
  const kv = fixture('firing-kv-cache-critical');
  const firedAt = Math.floor(Date.parse(kv.alerts[0]!.startsAt) / 1000);
  let ackUrl: string;
  let buttonValue: string;
  let chartUrl: string;

  beforeAll(async () => {
    [db, slack, sns] = await Promise.all([
      startLocalDynamoDb(env.TABLE_NAME!),
      startFakeSlackApi(),
      startSnsPlatform(),
    ]);
    prometheus = await startLoopback(matrixResponder(kv.alerts[0]!.labels, (t) => risingRatio(t, firedAt)));
    secrets = await startSecretsManager({
      [env.SETTINGS_SECRET_ARN!]: {
        WEBHOOK_TOKEN: TOKEN,
        ACK_SECRET,
        SLACK_BOT_TOKEN: BOT_TOKEN,
        SLACK_SIGNING_SECRET: SIGNING_SECRET,
      },
    });
    // Two alerts, one cold start: the messages carry the links the routes below answer.
    const gpu = fixtureText('firing-gpu-memory-leak');
    const { results } = await invoke([webhook(fixtureText('firing-kv-cache-critical')), webhook(gpu)]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 200]);
    // The SNS copy carries the page's link; the Slack app's message, the signed button and the chart.
    ackUrl = /https:\/\/alerts\.example\.com\/v1\/ack\/\S+/.exec(sns.delivered[0]!.Message!)![0];
    const [kvPost, gpuPost] = slack.calls();
    const image = kvPost!.blocks.find((b) => b.type === 'image') as { image_url: string } | undefined;
    chartUrl = image!.image_url;
    const actions = gpuPost!.blocks.find((b) => b.type === 'actions') as unknown as {
      elements: { action_id: string; value?: string }[];
    };
    buttonValue = actions.elements.find((e) => e.action_id === 'acknowledge')!.value!;
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled([db, secrets, slack, sns, prometheus].map((s) => s?.close()));
  });

  /** One cold start running `events`; `-c publicUrl`, `-c prometheusUrl`, `-c slackChannel` set as the stack sets them. */
  const invoke = (events: unknown[], prometheusUrl = prometheus.url, more: Record<string, string> = {}) =>
    invokeDeployed(receiver, events, {
      endpoints: { dynamodb: db.endpoint, sns: sns.endpoint, secretsManager: secrets.endpoint },
      env: {
        PUBLIC_URL,
        PROMETHEUS_URL: prometheusUrl,
        SLACK_CHANNEL: SLACK_CHANNEL_ID,
        SLACK_API_URL: slack.url,
        NODE_V8_COVERAGE: coverage.dir,
        ...more,
      },
    });
  const webhook = (body: string) => functionUrlEvent(body, { authorization: `Bearer ${TOKEN}` });
  const get = (url: string, headers: Record<string, string> = {}, cookies?: string[]) =>
    functionUrlRequest({ method: 'GET', path: new URL(url, PUBLIC_URL).pathname, headers, cookies });

  it('GET the acknowledgement link shows the alert and its form; the form POST acknowledges it', async () => {
    const page = await invoke([get(ackUrl)]);
    expect(page.results[0]).toMatchObject({
      statusCode: 200,
      headers: expect.objectContaining({ 'content-type': expect.stringMatching(/^text\/html/) }),
    });
    const html = page.results[0].body as string;
    expect(html).toContain('KV cache');
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1]!;
    const cookies = (page.results[0].cookies as string[]).map((c) => c.split(';')[0]!);
    const form = new URLSearchParams({ nonce: field('nonce'), mac: field('mac'), action: 'ack', name: 'alice' });
    const posted = await invoke([
      functionUrlRequest({
        method: 'POST',
        path: new URL(ackUrl).pathname,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: PUBLIC_URL,
          'sec-fetch-site': 'same-origin',
        },
        cookies,
        body: form.toString(),
      }),
    ]);
    expect(posted.results[0].statusCode).toBe(200);
    expect(posted.results[0].body).toMatch(/Acknowledged by <strong><bdi>alice<\/bdi><\/strong>/);
  }, 60_000);

  it("the Slack app's Acknowledge button, signed: acknowledged, and the message updated in place", async () => {
    const before = slack.calls().length;
    const body = new URLSearchParams({
      payload: JSON.stringify({
        type: 'block_actions',
        user: { id: 'U0BOB', username: 'bob', name: 'bob' },
        actions: [{ action_id: 'acknowledge', block_id: 'b', value: buttonValue, type: 'button' }],
      }),
    }).toString();
    const now = String(Math.floor(Date.now() / 1000));
    const headers = {
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': now,
      'x-slack-signature': slackSignature(new Secret(SIGNING_SECRET), now, body),
    };
    const forged = { ...headers, 'x-slack-signature': slackSignature(new Secret('not-the-signing-secret'), now, body) };
    const { results } = await invoke([
      functionUrlRequest({ method: 'POST', path: '/v1/slack/interactions', headers: forged, body }),
      functionUrlRequest({ method: 'POST', path: '/v1/slack/interactions', headers, body }),
    ]);
    expect(results.map((r) => r.statusCode)).toEqual([401, 200]);
    const after = slack.calls().slice(before);
    expect(after.map((c) => c.method)).toEqual(['chat.update', 'chat.postMessage']);
    expect(after[1]!.form.text).toMatch(/Acknowledged by \*bob\*/);
  }, 60_000);

  it('the chart link answers a PNG drawn from Prometheus, 403 for a forged link, a 503 PNG with Prometheus down', async () => {
    const forged = `${chartUrl.slice(0, -8)}xx.png`;
    const up = await invoke([get(chartUrl, { accept: 'image/png' }), get(forged)]);
    expect(up.results[0]).toMatchObject({
      statusCode: 200,
      isBase64Encoded: true,
      headers: expect.objectContaining({ 'content-type': 'image/png' }),
    });
    expectDrawnChart(Buffer.from(up.results[0].body, 'base64'));
    expect(prometheus.requests.some((r) => r.path.startsWith('/api/v1/query_range'))).toBe(true);
    expect(up.results[1]).toMatchObject({ statusCode: 403 });

    const down = await invoke([get(chartUrl)], 'http://127.0.0.1:9');
    expect(down.results[0]).toMatchObject({
      statusCode: 503,
      isBase64Encoded: true,
      headers: expect.objectContaining({ 'content-type': 'image/png', 'cache-control': 'no-store' }),
    });
    expect(PNG.sync.read(Buffer.from(down.results[0].body, 'base64')).width).toBe(800);
  }, 90_000);

  it("a zh-CN page's chart link draws the chart's own words in Chinese with the bundled CJK font", async () => {
    // The page in Chinese (the browser's Accept-Language) links a zh-CN chart.
    const page = await invoke([get(ackUrl, { 'accept-language': 'zh-CN,zh;q=0.9' })]);
    const src = /<img src="([^"]+)"/.exec(page.results[0].body as string)![1]!.replaceAll('&amp;', '&');
    expect(src).not.toBe(chartUrl);
    const openedS = Math.floor(Date.now() / 1000);
    const up = await invoke([get(src, { accept: 'image/png' })], prometheus.url, { TIME_ZONE: 'Asia/Shanghai' });
    expect(up.results[0]).toMatchObject({ statusCode: 200, isBase64Encoded: true });
    const drawn = expectDrawnChart(Buffer.from(up.results[0].body, 'base64'));
    // Its time axis is named by TIME_ZONE in Chinese (`时间（Asia/Shanghai）`, the bottom rows): as the sources draw it,
    // over the same window (the fired time to when it was opened: its tick labels' width places the name).
    setTimeZone('Asia/Shanghai');
    const spec = { query: 'x', labels: {}, title: '', unit: 'none' as const, firedAt };
    const local = { ...chartData(spec, [], chartWindow(spec, openedS)), locale: 'zh-CN' as const };
    const axis = PNG.sync.read(Buffer.from(await renderChartPng(local)));
    setTimeZone('UTC');
    const utc = PNG.sync.read(Buffer.from(await renderChartPng(local)));
    const rows = (png: PNG) => png.data.subarray(AXIS_NAME_ROW * png.width * 4);
    const band = (a: PNG, b: PNG) => pixelmatch(rows(a), rows(b), undefined, a.width, a.height - AXIS_NAME_ROW);
    expect(band(drawn, axis)).toBeLessThan(20);
    expect(band(drawn, utc)).toBeGreaterThan(100);
    // Prometheus down: the 503 image is all our own words, so it must be, pixel for pixel, what the sources
    // draw with the CJK font (boxes, were the font missing from the bundle, would differ).
    const down = await invoke([get(src)], 'http://127.0.0.1:9');
    expect(down.results[0]).toMatchObject({ statusCode: 503, isBase64Encoded: true });
    const w = chartWords('zh-CN');
    const bundled = PNG.sync.read(Buffer.from(down.results[0].body, 'base64'));
    const expected = PNG.sync.read(Buffer.from(await renderMessagePng(w.unavailable, w.failure.unreachable)));
    const english = PNG.sync.read(Buffer.from(await renderMessagePng('Chart unavailable', 'x')));
    const differ = (a: PNG, b: PNG) => pixelmatch(a.data, b.data, undefined, a.width, a.height, { threshold: 0.1 });
    expect(differ(bundled, expected)).toBeLessThan(50);
    expect(differ(bundled, english)).toBeGreaterThan(500);
  }, 90_000);

  it('holds the renderer as a chunk only `await import()` reaches, its WebAssembly and font beside it', () => {
    const chunks = join(receiver.assetDir, 'chunks');
    for (const file of ['index_bg.wasm', 'DejaVuSans.ttf']) expect(existsSync(join(chunks, file)), file).toBe(true);
    const renderer = readdirSync(chunks).filter(
      (f) => f.endsWith('.mjs') && readFileSync(join(chunks, f), 'utf8').includes('renderToSVGString'),
    );
    expect(renderer).toEqual([expect.stringMatching(/^render-[A-Z0-9]+\.mjs$/)]);
    // The CJK subset is inside the renderer's chunk (no file beside it), and not in the main bundle.
    const fontLine = ZH_FONT_BASE64.trim().split('\n')[0]!;
    expect(readFileSync(join(chunks, renderer[0]!), 'utf8')).toContain(fontLine);
    const main = readFileSync(join(receiver.assetDir, 'index.mjs'), 'utf8');
    expect(main).not.toContain('renderToSVGString');
    expect(main).not.toContain(fontLine);
    expect(main).toContain(`import("./chunks/${renderer[0]}")`);
  });

  it('loaded and called the chunks it answers for', () => {
    expectClaimedChunksRan(coverage, 'deployed-routes.test.ts');
  });
});
