/**
 * How a value of each signal unit and a memory trend read, in one place for the likely-cause
 * evidence (stored with the enrichment) and every channel's rendering (`shared/render/format.ts`).
 * Pure functions; numbers use `en-US` grouping (`61,440`) so output is the same on every host.
 */
import { lazy } from '../core/lazy.js';
import type { MemoryTrend, NoForecast, SignalUnit } from './types.js';

/** Typographic minus (U+2212) for −Inf, as Grafana and Prometheus UIs show it. */
const MINUS = '\u2212';

/** At or above this many MiB a value is shown in GiB (100 GiB); GPU memory reads best in MiB below it. */
export const GIB_THRESHOLD_MIB = 100 * 1024;

/**
 * An `en-US` number format, built on its first use rather than at import: the first `Intl.NumberFormat`
 * of a process loads ICU's number data (~20–30 ms of a Lambda cold init, `npm run bench -- floor`), which
 * an invocation that formats no value (a duplicate, a resolved alert, a heartbeat check) never needs.
 */
function nf(options: Intl.NumberFormatOptions): { format(value: number): string } {
  const format = lazy(() => new Intl.NumberFormat('en-US', options));
  return { format: (value) => format().format(value) };
}
const INTEGER = nf({ maximumFractionDigits: 0 });
const ONE_DECIMAL = nf({ maximumFractionDigits: 1, minimumFractionDigits: 1 });
const TWO_DECIMALS = nf({ maximumFractionDigits: 2, minimumFractionDigits: 2 });
const UP_TO_ONE_DECIMAL = nf({ maximumFractionDigits: 1 });
const UP_TO_TWO_DECIMALS = nf({ maximumFractionDigits: 2 });
const TWO_SIGNIFICANT = nf({ maximumSignificantDigits: 2 });
const FOUR_SIGNIFICANT = nf({ maximumSignificantDigits: 4 });

/**
 * Formats a signal value for display.
 * - `null` → `no data` (Prometheus returned no series; never shown as 0); `NaN` → `no data (NaN)`;
 *   ±Infinity → `+Inf` / `−Inf`.
 * - `seconds` (input in seconds): below 1 s as milliseconds (`850 ms`, `4.2 ms`), else seconds (`2.31 s`, `12.5 s`, `1,234 s`).
 * - `ratio` (input 0–1): percent with at most one decimal (`97.3%`).
 * - `per_second`: `1.2/s`, `0.033/s`, `1,234/s`.
 * - `mebibytes` (input MiB): `61,440 MiB`; from {@link GIB_THRESHOLD_MIB} on, `125.0 GiB`.
 * - `count`: `85`, `1,234`, `0.5`; `none`: four significant digits below 1,000, integers above.
 */
export function formatSignalValue(value: number | null, unit: SignalUnit): string {
  if (value === null) return 'no data';
  if (Number.isNaN(value)) return 'no data (NaN)';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return `${MINUS}Inf`;
  switch (unit) {
    case 'seconds':
      return formatSeconds(value);
    case 'ratio':
      return `${UP_TO_ONE_DECIMAL.format(value * 100)}%`;
    case 'per_second':
      return `${Math.abs(value) < 10 ? TWO_SIGNIFICANT.format(value) : INTEGER.format(value)}/s`;
    case 'mebibytes':
      return Math.abs(value) >= GIB_THRESHOLD_MIB
        ? `${ONE_DECIMAL.format(value / 1024)} GiB`
        : `${INTEGER.format(value)} MiB`;
    case 'count':
      return UP_TO_TWO_DECIMALS.format(value);
    case 'none':
      return Math.abs(value) >= 1000 ? INTEGER.format(value) : FOUR_SIGNIFICANT.format(value);
  }
}

function formatSeconds(seconds: number): string {
  const abs = Math.abs(seconds);
  if (abs < 1) {
    const ms = seconds * 1000;
    return `${Math.abs(ms) < 10 ? UP_TO_ONE_DECIMAL.format(ms) : INTEGER.format(ms)} ms`;
  }
  if (abs < 10) return `${TWO_DECIMALS.format(seconds)} s`;
  if (abs < 100) return `${ONE_DECIMAL.format(seconds)} s`;
  return `${INTEGER.format(seconds)} s`;
}

/**
 * The words of a memory trend's line, one set per language (`shared/render/locale.ts` has the
 * others); numbers come already formatted (`en-US` grouping everywhere).
 */
export interface TrendWords {
  noUpwardTrend: string;
  /** `time` from {@link TrendWords.hours} or {@link TrendWords.days}. */
  fullIn(time: string): string;
  hours(n: string): string;
  days(n: string): string;
  /** Whole minutes of history since the last restart, and the minutes a forecast needs. */
  shortHistory(minutes: string, neededMinutes: string): string;
  fewPoints(points: string, neededPoints: string): string;
  poorFit(rSquared: string, neededRSquared: string): string;
}

/** English, as every channel but a zh-CN instance shows it. */
export const EN_TREND_WORDS: TrendWords = {
  noUpwardTrend: 'no upward trend',
  fullIn: (time) => `full in ~${time}`,
  hours: (n) => `${n} h`,
  days: (n) => `${n} d`,
  shortHistory: (minutes, needed) => `not enough history (${minutes} min of the ${needed} min needed)`,
  fewPoints: (points, needed) => `not enough samples (${points} of the ${needed} needed)`,
  poorFit: (r2, needed) => `no upward trend (R² ${r2}, below the ${needed} needed)`,
};

/** Chinese, as zh-CN channels, pages and the likely-cause evidence in zh-CN show it. */
export const ZH_TREND_WORDS: TrendWords = {
  noUpwardTrend: '无上升趋势',
  fullIn: (time) => `约 ${time}后占满`,
  hours: (n) => `${n} 小时`,
  days: (n) => `${n} 天`,
  shortHistory: (minutes, needed) => `历史数据不足（已有 ${minutes} 分钟，需要 ${needed} 分钟）`,
  fewPoints: (points, needed) => `样本不足（已有 ${points} 个，需要 ${needed} 个）`,
  poorFit: (r2, needed) => `无明显上升趋势（R² ${r2}，低于要求的 ${needed}）`,
};

/**
 * One-line summary of a GPU memory trend, e.g. `+1,200 MiB/h · full in ~9.6 h · R² 0.98`.
 * Growth is MiB per hour (integer from 10 MiB/h up, one decimal below); `full in` appears only when
 * `hoursToFull` is known (shown in days, `~3.5 d`, from 48 h on). A trend that is not growing says
 * why ({@link formatNoForecast}); without a reason (growth ≤ 0, or not a finite number) it reads
 * `no upward trend`.
 * @param words the language (default English: the likely-cause evidence, the page, PagerDuty)
 */
export function formatMemoryTrend(trend: MemoryTrend, words: TrendWords = EN_TREND_WORDS): string {
  const growth = trend.growthMiBPerHour;
  if (trend.noForecast && trend.growing === false) return formatNoForecast(trend.noForecast, words);
  if (trend.growing === false || !Number.isFinite(growth) || growth <= 0) return words.noUpwardTrend;
  const parts = [`+${growth < 10 ? UP_TO_ONE_DECIMAL.format(growth) : INTEGER.format(growth)} MiB/h`];
  if (trend.hoursToFull !== null && Number.isFinite(trend.hoursToFull)) {
    parts.push(words.fullIn(formatHours(trend.hoursToFull, words)));
  }
  parts.push(`R² ${TWO_DECIMALS.format(trend.rSquared)}`);
  return parts.join(' · ');
}

/**
 * Why a trend gives no forecast, e.g. `not enough history (6 min of the 30 min needed)`,
 * `not enough samples (6 of the 10 needed)`, `no upward trend`, `no upward trend (R² 0.42, below the 0.70 needed)`.
 * @param words the language (default English)
 */
export function formatNoForecast(reason: NoForecast, words: TrendWords = EN_TREND_WORDS): string {
  switch (reason.reason) {
    case 'short_history':
      return words.shortHistory(wholeMinutes(reason.seconds), wholeMinutes(reason.neededSeconds));
    case 'few_points':
      return words.fewPoints(INTEGER.format(reason.points), INTEGER.format(reason.neededPoints));
    case 'not_growing':
      return words.noUpwardTrend;
    case 'poor_fit':
      return words.poorFit(TWO_DECIMALS.format(reason.rSquared), TWO_DECIMALS.format(reason.neededRSquared));
  }
}

/** Seconds as whole minutes, rounded down so that "29 min of the 30 min needed" never reads "30 of 30": `6`. */
function wholeMinutes(seconds: number): string {
  return INTEGER.format(Math.floor(Math.max(0, seconds) / 60));
}

/** Hours as `9.6 h`, or in days (`3.5 d`) from 48 h on. @param words the language (default English) */
export function formatHours(hours: number, words: TrendWords = EN_TREND_WORDS): string {
  if (hours >= 48) return words.days(UP_TO_ONE_DECIMAL.format(hours / 24));
  return words.hours(UP_TO_ONE_DECIMAL.format(hours));
}
