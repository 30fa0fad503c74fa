/**
 * Wires the alert charts (`shared/chart`) from the configuration: on only when the chart can be
 * both linked (`PUBLIC_URL`, `ACK_SECRET`: the acknowledgement keys sign it) and drawn
 * (`PROMETHEUS_URL`: the GET reads the series). Otherwise messages carry no image and nothing else changes.
 */
import { loadRenderer } from '../chart/load.js';
import type { ChartRouteDeps } from '../chart/routes.js';
import type { ChartLinkSettings } from '../chart/url.js';
import type { Logger } from '../core/logger.js';
import { PrometheusClient } from '../prometheus/client.js';
import type { Config } from './config.js';
import { prometheusEndpoint } from './endpoints.js';

/**
 * Budget of a chart's range query, its one retry included, milliseconds. Not the enrichment's: a
 * chart is fetched by a person or by Slack, not inside a webhook's time-out, and Slack gives up on
 * an image after a few seconds.
 */
export const CHART_QUERY_BUDGET_MS = 5000;

/**
 * Largest range-query answer a chart reads, bytes: one alert's series over a week at ≤ 300 points
 * is a few kB; 2 MiB still holds a few hundred series, and stops a query over a whole fleet.
 */
export const CHART_MAX_ANSWER_BYTES = 2 * 1024 * 1024;

/** The chart URL signer's settings, or `undefined` when charts are off. */
export function chartLinkSettings(config: Config): ChartLinkSettings | undefined {
  if (!config.publicUrl || !config.ackSecret || !config.prometheusUrl) return undefined;
  return {
    publicUrl: config.publicUrl,
    keys: { current: config.ackSecret, previous: config.ackPreviousSecret },
    ttlSeconds: config.ackTokenTtlSeconds,
  };
}

/** The chart route's dependencies, or `undefined` when charts are off (the route then does not exist). */
export function chartRouteDeps(config: Config, logger: Logger): ChartRouteDeps | undefined {
  const links = chartLinkSettings(config);
  const prometheus = prometheusEndpoint(config);
  if (!links || !prometheus) return undefined;
  const queryTimeoutMs = config.enrichment.queryTimeoutMs ?? CHART_QUERY_BUDGET_MS / 2;
  return {
    keys: links.keys,
    prometheus: new PrometheusClient(prometheus, {
      queryTimeoutMs,
      maxResponseBytes: CHART_MAX_ANSWER_BYTES,
    }),
    renderer: loadRenderer,
    timeoutMs: CHART_QUERY_BUDGET_MS,
    logger,
    now: () => Date.now(),
  };
}
