/**
 * The chart's own words, in each language: the subtitle, the mark labels, the time axis's name, the
 * "no data" note and the 503 image's text. The alert's name and label values stay as sent; a signal's
 * name in the title is its label in the chart's language (`shared/enrich/signals/labels.ts`).
 *
 * Every character the zh-CN words can draw must be in the bundled CJK font subset (`zh-font.ts`):
 * `scripts/chart-font.ts` makes it from these words, and `test/unit/chart/zh-font.test.ts` fails when
 * a word here needs a character the subset lacks.
 */
import type { Locale } from '../core/locale.js';
import { EN_TREND_WORDS, type TrendWords, ZH_TREND_WORDS } from '../enrich/values.js';

/** Why a chart could not be drawn (`routes.ts`): the 503 image says which, never the query or Prometheus's address. */
export type FailureCause = 'timeout' | 'unreachable' | 'too_large' | 'unavailable' | 'refused';

export interface ChartWords {
  /** The fire-time mark's label and the subtitle's first part. */
  fired: string;
  /** The subtitle's latest value (the moment the chart is drawn). */
  now: string;
  threshold: string;
  capacity: string;
  trend: string;
  /** A value the series does not have. */
  noData: string;
  /** Between a subtitle part's time and its value (`fired 14:05 UTC: 97.2%`). */
  colon: string;
  /** Between the memory trend's growth and its time to full. */
  comma: string;
  /** The memory trend's words (no upward trend, full in ~8.5 h). */
  trendWords: TrendWords;
  /** The time axis's name: the zone its times are in, e.g. `Asia/Shanghai`. */
  timeAxis(zone: string): string;
  /** The note over an empty chart. */
  noSeries: string;
  /** The title of an alert without an `alertname` label. */
  unnamed: string;
  /** The title of an `up` chart (a scrape target not answering), after the alert's name. */
  upTitle: string;
  /** The 503 image's heading and its sentence per cause. */
  unavailable: string;
  failure: Readonly<Record<FailureCause, string>>;
}

const EN: ChartWords = {
  fired: 'fired',
  now: 'now',
  threshold: 'threshold',
  capacity: 'capacity',
  trend: 'trend',
  noData: 'no data',
  colon: ': ',
  comma: ', ',
  trendWords: EN_TREND_WORDS,
  timeAxis: (zone) => `time (${zone})`,
  noSeries: 'No data for this alert\u2019s series in Prometheus',
  unnamed: 'alert',
  upTitle: 'up (target answering scrapes)',
  unavailable: 'Chart unavailable',
  failure: {
    timeout: 'Prometheus did not answer in time. Reload in a moment.',
    unreachable: 'Prometheus could not be reached. Reload in a moment.',
    too_large: "Prometheus's answer was too large to draw (too many series).",
    unavailable: 'Prometheus is unavailable (HTTP 503). Reload in a moment.',
    refused: 'Prometheus refused the query.',
  },
};

const ZH_CN: ChartWords = {
  fired: '触发',
  now: '现在',
  threshold: '阈值',
  capacity: '容量',
  trend: '趋势',
  noData: '无数据',
  colon: '：',
  comma: '，',
  trendWords: ZH_TREND_WORDS,
  timeAxis: (zone) => `时间（${zone}）`,
  noSeries: 'Prometheus 中没有此告警的序列数据',
  unnamed: '告警',
  upTitle: 'up（target 是否响应抓取）',
  unavailable: '趋势图暂不可用',
  failure: {
    timeout: 'Prometheus 未及时响应，请稍后刷新。',
    unreachable: '连不上 Prometheus，请稍后刷新。',
    too_large: 'Prometheus 返回的数据过多（序列太多），无法绘制。',
    unavailable: 'Prometheus 暂不可用（HTTP 503），请稍后刷新。',
    refused: 'Prometheus 拒绝了查询。',
  },
};

const WORDS: Readonly<Record<Locale, ChartWords>> = { en: EN, 'zh-CN': ZH_CN };

/** The chart's words in `locale` (default `en`). */
export const chartWords = (locale: Locale = 'en'): ChartWords => WORDS[locale];
