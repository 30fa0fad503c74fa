/**
 * Human formatting of enrichment values for notifications: signal values by unit, memory
 * trends, timestamps and Alertmanager silence links. Pure functions; numbers use `en-US`
 * grouping (`61,440`) so output is the same on every host.
 */
import type { LikelyCause, MemoryTrend, Signal, SignalUnit } from '../enrich/types.js';

/** Typographic minus (U+2212) for −Inf, as Grafana and Prometheus UIs show it. */
const MINUS = '\u2212';

/** At or above this many MiB a value is shown in GiB (100 GiB); GPU memory reads best in MiB below it. */
export const GIB_THRESHOLD_MIB = 100 * 1024;

const nf = (options: Intl.NumberFormatOptions) => new Intl.NumberFormat('en-US', options);
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
      return Math.abs(value) >= GIB_THRESHOLD_MIB ? `${ONE_DECIMAL.format(value / 1024)} GiB` : `${INTEGER.format(value)} MiB`;
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
 * One reading of a signal (its value now, or `signal.atStart`) for display: like
 * {@link formatSignalValue}, except that NaN reads `no requests` when the signal says NaN means
 * that (`nanMeans: 'no_requests'`), and a quantile at or above its histogram's top finite bucket
 * reads `≥ bound` (e.g. `≥ 10.00 s`), since Prometheus caps it there.
 */
export function formatReading(value: number | null | undefined, signal: Pick<Signal, 'unit' | 'nanMeans' | 'topBucket'>): string {
  if (value === null || value === undefined) return 'no data';
  if (Number.isNaN(value) && signal.nanMeans === 'no_requests') return 'no requests';
  if (signal.topBucket !== undefined && Number.isFinite(value) && value >= signal.topBucket) {
    return `≥ ${formatSignalValue(signal.topBucket, signal.unit)}`;
  }
  return formatSignalValue(value, signal.unit);
}

/**
 * One-line summary of a GPU memory trend, e.g. `+1,200 MiB/h · full in ~9.6 h · R² 0.98`.
 * Growth is MiB per hour (integer from 10 MiB/h up, one decimal below); `full in` appears only when
 * `hoursToFull` is known (shown in days, `~3.5 d`, from 48 h on). A trend that is not growing
 * (`growing: false`, growth ≤ 0, or not a finite number) reads `no upward trend`.
 */
export function formatMemoryTrend(trend: MemoryTrend): string {
  const growth = trend.growthMiBPerHour;
  if (trend.growing === false || !Number.isFinite(growth) || growth <= 0) return 'no upward trend';
  const parts = [`+${growth < 10 ? UP_TO_ONE_DECIMAL.format(growth) : INTEGER.format(growth)} MiB/h`];
  if (trend.hoursToFull !== null && Number.isFinite(trend.hoursToFull)) {
    parts.push(`full in ~${formatHours(trend.hoursToFull)}`);
  }
  parts.push(`R² ${TWO_DECIMALS.format(trend.rSquared)}`);
  return parts.join(' · ');
}

/**
 * What a trend was fitted on, e.g. `Theil–Sen fit over 6 h` or `Theil–Sen fit over 2.5 h, since a
 * restart at 2026-11-29 10:15:00 UTC`; the series name is added when it is not DCGM's default.
 */
export function formatTrendBasis(trend: MemoryTrend): string {
  const method = trend.method === 'theil-sen' ? 'Theil–Sen fit' : 'fit';
  const parts = [`${method} over ${formatHours(trend.windowSeconds / 3600)}`];
  if (trend.restartedAt) parts.push(`since a restart at ${formatTime(trend.restartedAt)}`);
  if (trend.series && trend.series !== 'DCGM_FI_DEV_FB_USED') parts.push(`of ${trend.series}`);
  return parts.join(', ');
}

/** A likely cause as lines: `Likely cause: …`, `Evidence: a; b`, `Try: …`. */
export function formatLikelyCause(cause: LikelyCause): string[] {
  return [`Likely cause: ${cause.cause}`, `Evidence: ${cause.evidence.join('; ')}`, `Try: ${cause.action}`];
}

function formatHours(hours: number): string {
  if (hours >= 48) return `${UP_TO_ONE_DECIMAL.format(hours / 24)} d`;
  return `${UP_TO_ONE_DECIMAL.format(hours)} h`;
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
