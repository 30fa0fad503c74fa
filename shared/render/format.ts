/**
 * Human formatting of enrichment for notifications: readings, trend bases, likely causes,
 * timestamps and Alertmanager silence links. Values by unit and memory trends read as
 * `shared/enrich/values.ts` writes them (the likely-cause evidence uses them too). Pure functions.
 */
import type { LikelyCause, MemoryTrend, Signal } from '../enrich/types.js';
import { formatHours, formatMemoryTrend, formatSignalValue } from '../enrich/values.js';
import { elapsed } from './elapsed.js';
import { type Locale, messages } from './locale.js';

/**
 * One reading of a signal (its value now, or `signal.atStart`) for display: like
 * {@link formatSignalValue}, except that NaN reads `no requests` when the signal says NaN means
 * that (`nanMeans: 'no_requests'`), and a quantile at or above its histogram's top finite bucket
 * reads `≥ bound` (e.g. `≥ 10.00 s`), since Prometheus caps it there; seconds elapsed (`elapsed`) read
 * as a duration rounded down to its largest units ({@link elapsed}: `45 s`, `12 min`, `2 h 5 min`).
 */
export function formatReading(value: number | null | undefined, signal: Pick<Signal, 'unit' | 'nanMeans' | 'topBucket' | 'elapsed'>): string {
  if (value === null || value === undefined) return 'no data';
  if (signal.elapsed && signal.unit === 'seconds' && Number.isFinite(value)) return elapsed(0, value * 1000);
  if (Number.isNaN(value) && signal.nanMeans === 'no_requests') return 'no requests';
  if (signal.topBucket !== undefined && Number.isFinite(value) && value >= signal.topBucket) {
    return `≥ ${formatSignalValue(signal.topBucket, signal.unit)}`;
  }
  return formatSignalValue(value, signal.unit);
}

/**
 * What a trend was fitted on, e.g. `Theil–Sen fit over 6 h` or `Theil–Sen fit over 2.5 h, since a
 * restart at 2026-11-29 10:15:00 UTC` (zh-CN: `Theil–Sen 拟合，时间窗 2.5 小时，自 … 重启以来`); the
 * series name is added when it is not DCGM's default.
 */
export function formatTrendBasis(trend: MemoryTrend, locale?: Locale): string {
  const { trend: words, trendBasis: t } = messages(locale);
  const parts = [t.fit(trend.method === 'theil-sen', formatHours(trend.windowSeconds / 3600, words))];
  if (trend.restartedAt) parts.push(t.sinceRestart(formatTime(trend.restartedAt)));
  if (trend.series && trend.series !== 'DCGM_FI_DEV_FB_USED') parts.push(t.ofSeries(trend.series));
  return parts.join(t.join);
}

/** A memory trend's line in `locale` (see {@link formatMemoryTrend}): `+800 MiB/h · full in ~3.1 d · R² 1.00`. */
export function formatTrend(trend: MemoryTrend, locale?: Locale): string {
  return formatMemoryTrend(trend, messages(locale).trend);
}

/**
 * A likely cause as lines: `Likely cause: …`, `Evidence: a; b`, `Try: …` (`可能原因: …`, `证据: …`,
 * `建议: …` in zh-CN). The words are ours and translated; the rule's cause, evidence and action are
 * shown as written.
 */
export function formatLikelyCause(cause: LikelyCause, locale?: Locale): string[] {
  const t = messages(locale).likelyCause;
  return [`${t.cause}: ${cause.cause}`, `${t.evidence}: ${cause.evidence.join('; ')}`, `${t.try}: ${cause.action}`];
}


/**
 * An RFC 3339 timestamp as `2026-11-29 12:42:23 UTC` (seconds precision). Returns the input
 * unchanged when it does not parse.
 */
export function formatTime(rfc3339: string): string {
  const ms = Date.parse(rfc3339);
  if (Number.isNaN(ms)) return rfc3339;
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** The silence link lives with Alertmanager's other formats; re-exported for the channels that import it from here. */
export { silenceUrl } from '../alertmanager/silence-link.js';
