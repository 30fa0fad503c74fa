/**
 * Human formatting of enrichment for notifications: readings, trend bases, likely causes,
 * timestamps and Alertmanager silence links. Values by unit and memory trends read as
 * `shared/enrich/values.ts` writes them (the likely-cause evidence uses them too). Pure functions.
 */
import type { Enrichment, LikelyCause, MemoryTrend, Signal } from '../enrich/types.js';
import { formatHours, formatMemoryTrend, formatSignalValue } from '../enrich/values.js';
import { causeIn } from '../enrich/causes/likely-cause.js';
import { signalLabel } from '../enrich/signals/labels.js';
import { timeZoneName, wallClock } from '../core/time-zone.js';
import { elapsed } from './elapsed.js';
import { type Locale, messages } from './locale.js';

/**
 * One reading of a signal (its value now, or `signal.atStart`) for display: like
 * {@link formatSignalValue}, except that NaN reads `no requests` when the signal says NaN means
 * that (`nanMeans: 'no_requests'`), and a quantile at or above its histogram's top finite bucket
 * reads `≥ bound` (e.g. `≥ 10.00 s`), since Prometheus caps it there; seconds elapsed (`elapsed`) read
 * as a duration rounded down to its largest units ({@link elapsed}: `45 s`, `12 min`, `2 h 5 min`).
 */
export function formatReading(
  value: number | null | undefined,
  signal: Pick<Signal, 'unit' | 'nanMeans' | 'topBucket' | 'elapsed'>,
  locale?: Locale,
): string {
  const t = messages(locale);
  if (value === null || value === undefined) return t.noData;
  if (signal.elapsed && signal.unit === 'seconds' && Number.isFinite(value)) return elapsed(0, value * 1000, locale);
  if (Number.isNaN(value)) return signal.nanMeans === 'no_requests' ? t.noRequests : t.noDataNaN;
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

/** An enrichment that found a likely cause: the cause and the facts it was found on. */
type WithCause = Pick<Extract<Enrichment, { status: 'enriched' }>, 'signals' | 'trend'> & { likelyCause?: LikelyCause };

/**
 * The enrichment's likely cause in `locale` (zh-CN: its rule's Chinese text, the evidence worded
 * again, `causeIn`); `undefined` when it found none.
 */
export function likelyCauseIn(e: WithCause, locale?: Locale): LikelyCause | undefined {
  return e.likelyCause && causeIn(e.likelyCause, e, locale);
}

/**
 * A likely cause as lines: `Likely cause: …`, `Evidence: a; b`, `Try: …` (`可能原因：…`, `依据：…`,
 * `建议：…` in zh-CN), the cause itself in `locale` ({@link likelyCauseIn}).
 */
export function formatLikelyCause(e: WithCause & { likelyCause: LikelyCause }, locale?: Locale): string[] {
  const t = messages(locale).likelyCause;
  const cause = likelyCauseIn(e, locale)!;
  return [
    `${t.cause}${t.colon}${cause.cause}`,
    `${t.evidence}${t.colon}${cause.evidence.join(t.separator)}`,
    `${t.try}${t.colon}${cause.action}`,
  ];
}

/** A signal's label in `locale` (`shared/enrich/signals/labels.ts`). */
export function formatLabel(signal: Pick<Signal, 'name' | 'label'>, locale?: Locale): string {
  return signalLabel(signal, locale);
}

/**
 * Why enrichment is unavailable, in `locale`: the reason as recorded, its Chinese text for zh-CN (a record
 * written before reasons had one reads its kind of failure in Chinese; failing that, as recorded).
 */
export function unavailableReason(e: Extract<Enrichment, { status: 'unavailable' }>, locale?: Locale): string {
  if (locale !== 'zh-CN') return e.reason;
  return e.reasonZh ?? (e.cause ? ZH_UNAVAILABLE[e.cause] : undefined) ?? e.reason;
}

const ZH_UNAVAILABLE: Readonly<Record<NonNullable<Extract<Enrichment, { status: 'unavailable' }>['cause']>, string>> = {
  not_configured: '未设置 PROMETHEUS_URL',
  timeout: '查询超时',
  network: '连不上 Prometheus',
  prometheus_error: 'Prometheus 返回错误',
  no_query: '没有可查的指标',
  error: '查询出错',
  storm: '告警风暴，未查询',
};

export { setTimeZone, timeZoneProblem, wallClock } from '../core/time-zone.js';

/**
 * An RFC 3339 timestamp as `2026-11-29 12:42:23 UTC` (seconds precision), in the process's time zone
 * (`TIME_ZONE`), which it names: `2026-11-29 20:42:23 Asia/Shanghai`. Returns the input unchanged when it
 * does not parse.
 */
export function formatTime(rfc3339: string): string {
  const ms = Date.parse(rfc3339);
  if (Number.isNaN(ms)) return rfc3339;
  return `${wallClock(ms)} ${timeZoneName()}`;
}

/** The silence link lives with Alertmanager's other formats; re-exported for the channels that import it from here. */
export { silenceUrl } from '../alertmanager/silence-link.js';
