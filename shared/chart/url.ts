/**
 * The signed chart URL of an alert: `PUBLIC_URL/v1/chart/<token>.png`. A pure function of the alert,
 * the settings and the clock, so the pipeline (messages) and the acknowledgement page can each make
 * one; without `PUBLIC_URL`, `ACK_SECRET` or `PROMETHEUS_URL` there are no settings and no chart.
 */
import type { Locale } from '../core/locale.js';
import type { EnrichedAlert } from '../enrich/types.js';
import { chartSpec, type ChartableAlert } from './spec.js';
import type { SigningKeys } from '../core/signed-token.js';
import { signChartToken } from './token.js';

/** Route prefix of the chart images (see `routes.ts`). */
export const CHART_PATH = '/v1/chart';

/** Suffix of every chart URL: mail clients and chat unfurlers guess the type from it. */
export const CHART_SUFFIX = '.png';

/**
 * Longest chart URL made, characters: Slack refuses an image block whose `image_url` is longer.
 * An alert whose labels and query do not fit gets no chart (its message is unchanged otherwise).
 * @see https://docs.slack.dev/reference/block-kit/blocks/image-block
 */
export const MAX_CHART_URL_CHARS = 3000;

export interface ChartLinkSettings {
  /** `PUBLIC_URL`, without trailing slash; may have a path (a reverse proxy's prefix). */
  publicUrl: string;
  /** The acknowledgement keys (`ACK_SECRET`, `ACK_PREVIOUS_SECRET`). */
  keys: SigningKeys;
  /** Link lifetime, seconds: `ACK_TOKEN_TTL_SECONDS`, so a message's chart lives as long as its Acknowledge link. */
  ttlSeconds: number;
  /**
   * The language of the chart's own words and title, signed into the link: the channel's (zh-CN for
   * Feishu, DingTalk, WeCom) or the acknowledgement page's. Default `en`.
   */
  locale?: Locale;
}

/**
 * The alert's signed chart URL.
 * @param alert the alert with its enrichment, as sent or as its record keeps it (see `chartSpec` for what is charted)
 * @param settings absent when charts are off (no `PUBLIC_URL`, `ACK_SECRET` or `PROMETHEUS_URL`)
 * @param nowMs epoch milliseconds: the link expires `ttlSeconds` after it
 * @returns the absolute URL, or `undefined` when charts are off, there is nothing to chart, or the URL
 *   would exceed {@link MAX_CHART_URL_CHARS}
 */
export function chartUrl(
  alert: ChartableAlert,
  settings: ChartLinkSettings | undefined,
  nowMs: number,
): string | undefined {
  if (!settings) return undefined;
  const spec = chartSpec(alert, settings.locale);
  if (!spec) return undefined;
  const token = signChartToken(spec, Math.ceil(nowMs / 1000) + settings.ttlSeconds, settings.keys, settings.locale);
  const url = `${settings.publicUrl}${CHART_PATH}/${token}${CHART_SUFFIX}`;
  return url.length <= MAX_CHART_URL_CHARS ? url : undefined;
}

/**
 * The alert with its chart URL set (`chartUrl` on {@link EnrichedAlert}) when it has one.
 * @param detailed whether the message shows the alert in detail (an alert only listed in a storm digest gets no chart)
 */
export function withChartUrl(
  alert: EnrichedAlert,
  detailed: boolean,
  settings: ChartLinkSettings | undefined,
  nowMs: number,
): EnrichedAlert {
  const url = detailed ? chartUrl(alert, settings, nowMs) : undefined;
  return url ? { ...alert, chartUrl: url } : alert;
}
