/**
 * Wires the alert charts (`shared/chart`) from the configuration: on only when the chart can be
 * both linked (`PUBLIC_URL`, `ACK_SECRET`: the acknowledgement keys sign it) and drawn
 * (`PROMETHEUS_URL`: the GET reads the series). Otherwise messages carry no image and nothing else changes.
 */
import type { ChartLinkSettings } from '../chart/url.js';
import type { Config } from './config.js';

/** The chart URL signer's settings, or `undefined` when charts are off. */
export function chartLinkSettings(config: Config): ChartLinkSettings | undefined {
  if (!config.publicUrl || !config.ackSecret || !config.prometheusUrl) return undefined;
  return { publicUrl: config.publicUrl, keys: { current: config.ackSecret, previous: config.ackPreviousSecret }, ttlSeconds: config.ackTokenTtlSeconds };
}
