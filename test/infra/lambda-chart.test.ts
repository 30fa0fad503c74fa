/**
 * The chart route in the deployed receiver: the Lambda asset as `cdk deploy` uploads it holds the
 * renderer as a chunk of its own (`chunks/render-<hash>.mjs`, its WebAssembly and font beside it) that
 * only `await import()` reaches, the main bundle holds none of it, and the bundle, cold-started in a plain Node process, answers a signed chart URL with
 * a PNG drawn from a loopback Prometheus, and with a 503 PNG when Prometheus cannot be reached.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chartUrl } from '../../shared/chart/url.js';
import { Secret } from '../../shared/core/secret.js';
import { bundleReceiver, functionUrlEvent, invokeBundle, type ReceiverBundle } from '../../scripts/lambda-local.js';
import { matrixResponder, risingRatio } from '../helpers/chart.js';
import { fixture } from '../helpers/fixtures.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { expectDrawnChart } from '../helpers/png.js';

const ACK_SECRET = 'lambda-chart-ack-secret-0123456789abcdef';
const PUBLIC_URL = 'https://alerts.example.com';

/** A Function URL GET of `path` (payload format 2.0). */
function getEvent(path: string) {
  const event = functionUrlEvent('', { accept: 'image/png' }, path);
  return { ...event, body: undefined, requestContext: { ...event.requestContext, http: { ...event.requestContext.http, method: 'GET' } } };
}

describe('the chart renderer in the Lambda asset', () => {
  let bundle: ReceiverBundle;
  let prometheus: Loopback;
  const alert = { ...fixture('firing-kv-cache-critical').alerts[0]!, enrichment: { status: 'unavailable' as const, kind: 'kv_cache' as const, reason: 'test' } };
  const firedAt = Math.floor(Date.parse(alert.startsAt) / 1000);

  beforeAll(async () => {
    bundle = bundleReceiver();
    prometheus = await startLoopback(matrixResponder({ instance: '127.0.0.1:9800', job: 'vllm', model_name: 'qwen3-8b' }, (t) => risingRatio(t, firedAt)));
  }, 120_000);
  afterAll(async () => {
    bundle?.dispose();
    await prometheus?.close();
  });

  it('is a chunk of its own that only `await import()` reaches, with its WebAssembly and font beside it', () => {
    const chunks = join(dirname(bundle.path), 'chunks');
    for (const file of ['index_bg.wasm', 'DejaVuSans.ttf']) expect(existsSync(join(chunks, file)), file).toBe(true);
    const renderer = readdirSync(chunks).filter((f) => f.endsWith('.mjs') && readFileSync(join(chunks, f), 'utf8').includes('renderToSVGString'));
    expect(renderer).toEqual([expect.stringMatching(/^render-[A-Z0-9]+\.mjs$/)]);
    const main = readFileSync(bundle.path, 'utf8');
    expect(main).not.toContain('renderToSVGString');
    expect(main).not.toContain('resvg');
    // Loaded on first use only: a dynamic import of that chunk, never a static one.
    expect(main).toContain(`import("./chunks/${renderer[0]}")`);
    expect(main).not.toMatch(new RegExp(`from\\s*"\\./chunks/${renderer[0]!.replace('.', '\\.')}"`));
  });

  it('answers a signed chart URL with a PNG read from Prometheus, and 503 with a PNG when Prometheus is down', async () => {
    const now = Date.now();
    const settings = { publicUrl: PUBLIC_URL, keys: { current: new Secret(ACK_SECRET) }, ttlSeconds: 3600 };
    const path = new URL(chartUrl(alert, settings, now)!).pathname;
    const env = {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_LAMBDA_FUNCTION_NAME: 'receiver',
      TABLE_NAME: 'chart',
      WEBHOOK_TOKEN: 'lambda-chart-token-0123456789',
      PUBLIC_URL,
      ACK_SECRET,
    };
    const up = await invokeBundle(bundle.path, { ...env, PROMETHEUS_URL: prometheus.url }, [getEvent(path), getEvent(`${path.slice(0, -8)}xx.png`)]);
    expect(up.results[0]).toMatchObject({ statusCode: 200, isBase64Encoded: true, headers: expect.objectContaining({ 'content-type': 'image/png' }) });
    expectDrawnChart(Buffer.from(up.results[0].body, 'base64'));
    expect(prometheus.requests.some((r) => r.path.startsWith('/api/v1/query_range'))).toBe(true);
    expect(up.results[1]).toMatchObject({ statusCode: 403 });

    const down = await invokeBundle(bundle.path, { ...env, PROMETHEUS_URL: 'http://127.0.0.1:9' }, [getEvent(path)]);
    expect(down.results[0]).toMatchObject({ statusCode: 503, isBase64Encoded: true, headers: expect.objectContaining({ 'content-type': 'image/png', 'cache-control': 'no-store' }) });
    expect(PNG.sync.read(Buffer.from(down.results[0].body, 'base64')).width).toBe(800);
  }, 90_000);
});
