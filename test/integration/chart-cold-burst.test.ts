/**
 * The chart route checks a link's token before it counts the chart as being drawn: a bad link draws
 * nothing, so it is answered 400/403/410 at once, never 503 "Too many charts are being drawn". Found
 * when the route became lazily mounted (shared/http/lazy-routes.ts): requests arriving during the first
 * load all resume at once, and the count (then taken before the token) refused most of a burst of
 * malformed links with 503 and Retry-After.
 */
import { describe, expect, it } from 'vitest';
import { Secret } from '../../shared/core/secret.js';
import { createLogger } from '../../shared/core/logger.js';
import { createApp } from '../../shared/http/app.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { loadRenderer } from '../../shared/chart/load.js';
import { PrometheusClient } from '../../shared/prometheus/client.js';

const KEY = new Secret('chart-routes-ack-secret-0123456789abcdef');

function app() {
  return createApp(
    { allowUnauthenticated: true },
    {
      ...testDeps({ logger: createLogger('error', () => undefined) }),
      chartRoutes: {
        keys: { current: KEY },
        // Never reached: every request below has a malformed token.
        prometheus: new PrometheusClient('http://127.0.0.1:9', { queryTimeoutMs: 100, retryDelayMs: 10 }),
        renderer: loadRenderer,
        timeoutMs: 1000,
        logger: createLogger('error', () => undefined),
        now: () => Date.now(),
      },
    },
  );
}

describe('chart route, first requests of a cold process (lazy load)', () => {
  it('answers a burst of malformed chart links 400 each, as when warm, never 503 "too many charts"', async () => {
    const cold = app();
    const statuses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (async () => (await cold.request(`/v1/chart/not-a-token-${i}.png`)).status)(),
      ),
    );
    expect(statuses).toEqual(Array(8).fill(400));
  });
});
