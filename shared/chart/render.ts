/**
 * The chart renderer: {@link ChartData} → SVG (Apache ECharts, server-side rendering without a DOM)
 * → PNG (resvg compiled to WebAssembly), with the DejaVu Sans font bundled, and a CJK subset of Noto Sans SC
 * (`zh-font.ts`) for the zh-CN words (`words.ts`). Times are in `TIME_ZONE`. Loaded lazily (see
 * `load.ts`): none of it is in the receiver's cold start or main bundle.
 *
 * Why these: a chart must be drawn inside Lambda (Node, arm64) with no browser and no native addon
 * (neither can be built or fetched here, nor would match arm64). ECharts (Apache-2.0, Apache
 * Foundation, released monthly) renders SVG strings in Node since 5.3 (`ssr: true` +
 * `renderToSVGString`), with time axes and mark lines/points out of the box; vega-lite needs more
 * packages (vega, its SVG renderer's text measuring) for the same. resvg (MPL-2.0, `@resvg/resvg-wasm`)
 * is a complete SVG renderer in Rust: its WebAssembly build runs the same on x86-64 and arm64 and
 * draws the same pixels everywhere given the same font, which makes golden-image tests possible.
 * WebAssembly has no system fonts, so the font is passed in: DejaVu Sans (`dejavu-fonts-ttf`, Bitstream
 * Vera licence + public domain changes: free to bundle and redistribute), one TrueType file (resvg reads
 * TTF/OTF, not the WOFF2 of the `@fontsource` packages), with wide Unicode coverage for label values.
 *
 * @see https://echarts.apache.org/handbook/en/how-to/cross-platform/server/
 * @see https://github.com/thx/resvg-js
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { initWasm, Resvg } from '@resvg/resvg-wasm';
import { LineChart } from 'echarts/charts';
import {
  GraphicComponent,
  GridComponent,
  MarkLineComponent,
  MarkPointComponent,
  TitleComponent,
} from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import type { EChartsCoreOption } from 'echarts/core';
import { formatSignalValue } from '../enrich/values.js';
import type { Point } from '../prometheus/client.js';
import { timeZoneName, wallClock } from '../core/time-zone.js';
import type { ChartData } from './data.js';
import { chartWords, type ChartWords } from './words.js';
import { ZH_FONT_BASE64 } from './zh-font.js';

echarts.use([
  LineChart,
  GraphicComponent,
  GridComponent,
  MarkLineComponent,
  MarkPointComponent,
  TitleComponent,
  SVGRenderer,
]);

/** Size of every chart, CSS pixels: Slack shows images up to ~360 px high; mail and the page scale down. */
export const CHART_WIDTH = 800;
export const CHART_HEIGHT = 360;
/** The one font family drawn (the bundled file's family name). */
const FONT = 'DejaVu Sans';

/** The WebAssembly module and the font, next to the bundled renderer (Lambda) or in node_modules (`npm start`, tests). */
const WASM_FILE = { bundled: 'index_bg.wasm', module: '@resvg/resvg-wasm/index_bg.wasm' };
const FONT_FILE = { bundled: 'DejaVuSans.ttf', module: 'dejavu-fonts-ttf/ttf/DejaVuSans.ttf' };

function asset(file: { bundled: string; module: string }): Buffer {
  const beside = fileURLToPath(new URL(`./${file.bundled}`, import.meta.url));
  return readFileSync(existsSync(beside) ? beside : createRequire(import.meta.url).resolve(file.module));
}

let ready: Promise<Buffer[]> | undefined;
/**
 * Instantiates the WebAssembly once per process and reads the fonts: DejaVu Sans, then the CJK subset
 * (`zh-font.ts`), which resvg falls back to for each character DejaVu Sans lacks. A failure is retried next time.
 */
function init(): Promise<Buffer[]> {
  ready ??= initWasm(asset(WASM_FILE))
    .then(() => [asset(FONT_FILE), Buffer.from(ZH_FONT_BASE64, 'base64')])
    .catch((err: unknown) => {
      ready = undefined;
      throw err;
    });
  return ready;
}

const COLORS = {
  line: '#175cd3',
  threshold: '#b42318',
  fired: '#b54708',
  trend: '#6941c6',
  capacity: '#475467',
  text: '#1d2330',
  muted: '#5b6475',
};

const ms = (s: number) => s * 1000;
const DAY = 24 * 3600;
/** `HH:MM` of epoch seconds `s` in the process's time zone (`TIME_ZONE`). */
const clock = (s: number) => wallClock(ms(s)).slice(11, 16);

/** `HH:MM`, with the date before it (`YYYY-MM-DD HH:MM`) unless `s` is on the day of `now` (in `TIME_ZONE`): a time alone reads as today's. */
const onDay = (s: number, now: number) => {
  const [at, today] = [wallClock(ms(s)), wallClock(ms(now))];
  return at.slice(0, 10) === today.slice(0, 10) ? at.slice(11, 16) : at.slice(0, 16);
};

/**
 * The subtitle, in the chart's language: the values when fired and now (in `TIME_ZONE`, which it names;
 * the fire time dated when it was not today), the threshold, the trend. E.g.
 * `fired 2026-11-28 14:05 UTC: 97.2% · now 09:12 UTC: 98.0% · threshold > 95%`, or in zh-CN
 * `触发 2026-11-28 22:05 Asia/Shanghai：97.2% · 现在 17:12 Asia/Shanghai：98.0% · 阈值 > 95%`.
 */
export function chartSubtitle(d: ChartData): string {
  const w = chartWords(d.locale);
  const zone = timeZoneName();
  const value = (v: number | undefined) => (v === undefined ? w.noData : formatSignalValue(v, d.unit));
  const parts = [
    `${w.fired} ${onDay(d.firedAt, d.now)} ${zone}${w.colon}${value(d.fired?.value)}`,
    `${w.now} ${clock(d.now)} ${zone}${w.colon}${value(d.latest?.value)}`,
  ];
  if (d.threshold) parts.push(`${w.threshold} ${d.threshold.op} ${formatSignalValue(d.threshold.value, d.unit)}`);
  if (d.trend) parts.push(d.trend.projection ? `${w.trend} ${trendText(d, w)}` : w.trendWords.noUpwardTrend);
  return parts.join(' · ');
}

/** `+1,500 MiB/h, full in ~8.5 h` (zh-CN `+1,500 MiB/h，约 8.5 小时后占满`). */
function trendText(d: ChartData, w: ChartWords): string {
  const t = d.trend!.trend;
  const growth = `+${Math.round(t.growthMiBPerHour).toLocaleString('en-US')} MiB/h`;
  if (t.hoursToFull === null) return growth;
  const h = t.hoursToFull;
  const time = h >= 48 ? w.trendWords.days((h / 24).toFixed(1)) : w.trendWords.hours(h.toFixed(1));
  return `${growth}${w.comma}${w.trendWords.fullIn(time)}`;
}

/** A line series drawn as is (no symbols, no hover): the chart is a picture, not an interactive view. */
const line = (
  name: string,
  data: [number, number][],
  style: { color: string; type: 'solid' | 'dashed' | 'dotted' },
  extra: object = {},
) => ({
  type: 'line',
  name,
  data,
  showSymbol: false,
  silent: true,
  lineStyle: { color: style.color, width: 2, type: style.type },
  itemStyle: { color: style.color },
  ...extra,
});

const GRID = { left: 80, right: 32, top: 70, bottom: 36 };
/** Closest two value labels may be, horizontally, CSS pixels: a label such as `100.0%` or `61,440 MiB` is up to ~70 px wide. */
const LABEL_GAP_PX = 80;

/**
 * The points marked on the series: the value when fired and the latest, each with its value label —
 * except the fired label when it would overlap the latest's (closer than {@link LABEL_GAP_PX}; the
 * subtitle gives both values), and one mark when they are the same point.
 */
export function markedPoints(d: ChartData): { point: Point; label: boolean }[] {
  const { fired, latest } = d;
  if (!fired || !latest) return [fired, latest].filter((p) => p !== undefined).map((point) => ({ point, label: true }));
  if (fired.time === latest.time) return [{ point: latest, label: true }];
  const pxPerSecond = (CHART_WIDTH - GRID.left - GRID.right) / Math.max(1, d.xMax - d.xMin);
  return [
    { point: fired, label: (latest.time - fired.time) * pxPerSecond >= LABEL_GAP_PX },
    { point: latest, label: true },
  ];
}

/** The chart as ECharts draws it: the title with its subtitle, the axes, the series. */
function option(d: ChartData): EChartsCoreOption {
  const w = chartWords(d.locale);
  return {
    animation: false,
    useUTC: true,
    backgroundColor: '#ffffff',
    textStyle: { fontFamily: FONT },
    title: {
      text: d.title,
      subtext: chartSubtitle(d),
      left: 12,
      top: 8,
      textStyle: { fontSize: 15, color: COLORS.text, fontFamily: FONT },
      subtextStyle: { fontSize: 12, color: COLORS.muted, fontFamily: FONT },
    },
    grid: GRID,
    xAxis: timeAxis(d, w),
    yAxis: {
      type: 'value',
      scale: true,
      axisLabel: { color: COLORS.muted, formatter: (v: number) => formatSignalValue(v, d.unit) },
      splitLine: { lineStyle: { color: '#eaecf0' } },
    },
    series: series(d, w),
  };
}

/**
 * The series, in drawing order: the values (with the mark lines and points), the trend's fit, the
 * invisible levels that keep the data's y-range in view, the trend's projection.
 */
function series(d: ChartData, w: ChartWords): object[] {
  const values = d.points.map((p) => [ms(p.time), Number.isFinite(p.value) ? p.value : Number.NaN] as [number, number]);
  const marks = {
    connectNulls: false,
    markLine: { silent: true, symbol: 'none', data: markLines(d, w) },
    markPoint: { silent: true, itemStyle: { color: COLORS.fired }, data: markPoints(d) },
  };
  const all: object[] = [line('value', values, { color: COLORS.line, type: 'solid' }, marks)];
  const fit = d.trend?.fit.map((p): [number, number] => [ms(p.time), p.value]);
  if (fit) all.push(line('fit', fit, { color: COLORS.trend, type: 'dashed' }));
  // The y-range of the data (threshold, capacity, margins, 0 for ratios and counts) stays in view: an
  // invisible point at each end widens the axis, which ECharts then rounds to nice ticks (mark lines do not count).
  const levels = [d.yMin, d.yMax].filter(Number.isFinite).map((v): [number, number] => [ms(d.xMin), v]);
  const hidden = { lineStyle: { opacity: 0 } };
  if (levels.length) all.push(line('levels', levels, { color: 'transparent', type: 'solid' }, hidden));
  const projection = d.trend?.projection?.map((p): [number, number] => [ms(p.time), p.value]);
  if (projection) all.push(line('projection', projection, { color: COLORS.trend, type: 'dotted' }));
  return all;
}

/** The dashed lines across the chart: when it fired, the threshold and the capacity, each labelled. */
function markLines(d: ChartData, w: ChartWords): object[] {
  const level = (value: number, color: string, formatter: string, type: 'dashed' | 'solid') => ({
    yAxis: value,
    lineStyle: { color, type },
    label: { formatter, color, position: 'insideStartTop' },
  });
  const lines: object[] = [
    {
      xAxis: ms(d.firedAt),
      lineStyle: { color: COLORS.fired, type: 'dashed' },
      label: { formatter: w.fired, color: COLORS.fired, position: 'end' },
    },
  ];
  if (d.threshold) {
    const label = `${d.threshold.op} ${formatSignalValue(d.threshold.value, d.unit)}`;
    lines.push(level(d.threshold.value, COLORS.threshold, label, 'dashed'));
  }
  if (d.capacityMiB != null) {
    const label = `${w.capacity} ${formatSignalValue(d.capacityMiB, d.unit)}`;
    lines.push(level(d.capacityMiB, COLORS.capacity, label, 'solid'));
  }
  return lines;
}

/** The points of {@link markedPoints}, each with its value as its label (when it has one). */
function markPoints(d: ChartData): object[] {
  return markedPoints(d).map(({ point, label }) => ({
    coord: [ms(point.time), point.value],
    value: formatSignalValue(point.value, d.unit),
    symbolSize: 8,
    symbol: 'circle',
    label: { show: label, position: 'top', color: COLORS.text, formatter: '{c}' },
  }));
}

/**
 * The time axis, its labels in `TIME_ZONE` and named by it (`time (Asia/Shanghai)`). ECharts knows only UTC
 * and the host's zone: it places the ticks in UTC (on the hour in every zone a whole number of hours
 * off UTC), and each label is the tick's instant read in `TIME_ZONE`, right across a DST change.
 */
function timeAxis(d: ChartData, w: ChartWords): object {
  const long = d.xMax - d.xMin > DAY;
  return {
    type: 'time',
    min: ms(d.xMin),
    max: ms(d.xMax),
    name: w.timeAxis(timeZoneName()),
    nameLocation: 'middle',
    nameGap: 22,
    nameTextStyle: { color: COLORS.muted, fontSize: 11 },
    axisLabel: {
      color: COLORS.muted,
      hideOverlap: true,
      formatter: (v: number) => (long ? wallClock(v).slice(5, 16) : wallClock(v).slice(11, 16)),
    },
    splitLine: { show: false },
  };
}

/** Renders an SVG string to PNG bytes with the bundled fonts. */
async function toPng(svg: string): Promise<Uint8Array> {
  const fonts = await init();
  const resvg = new Resvg(svg, {
    font: { fontBuffers: fonts, defaultFontFamily: FONT, sansSerifFamily: FONT },
    fitTo: { mode: 'original' },
    background: '#ffffff',
  });
  try {
    const image = resvg.render();
    try {
      return image.asPng();
    } finally {
      image.free();
    }
  } finally {
    resvg.free();
  }
}

/**
 * Characters XML 1.0 does not allow in a document (C0 controls but tab/LF/CR, lone surrogates,
 * U+FFFE/U+FFFF): one in any text (an `alertname`, a label value) makes resvg refuse the whole SVG.
 * @see https://www.w3.org/TR/xml/#charsets
 */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu;

/** ECharts' SVG of an option, rendered without a DOM; characters XML forbids are dropped from every text. */
function svgOf(opt: EChartsCoreOption): string {
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: CHART_WIDTH, height: CHART_HEIGHT });
  try {
    chart.setOption(opt);
    return chart.renderToSVGString().replace(NOT_XML_CHAR, '');
  } finally {
    chart.dispose();
  }
}

/**
 * The chart as a PNG, {@link CHART_WIDTH} × {@link CHART_HEIGHT}; the same data gives the same bytes.
 * An empty series draws the axes and says "no data" (never a line at 0).
 */
export async function renderChartPng(data: ChartData): Promise<Uint8Array> {
  return toPng(renderChartSvg(data));
}

/** The chart's SVG (what {@link renderChartPng} rasterises): its own words in `data.locale`, its times in `TIME_ZONE`. */
export function renderChartSvg(data: ChartData): string {
  const opt = option(data);
  if (data.points.length === 0) (opt as { graphic?: object }).graphic = noteGraphic(chartWords(data.locale).noSeries);
  return svgOf(opt);
}

/** A PNG of the same size saying why there is no chart (e.g. Prometheus could not be reached). */
export async function renderMessagePng(heading: string, message: string): Promise<Uint8Array> {
  return toPng(renderMessageSvg(heading, message));
}

/** The SVG of {@link renderMessagePng}. */
export function renderMessageSvg(heading: string, message: string): string {
  return svgOf({
    animation: false,
    backgroundColor: '#ffffff',
    title: {
      text: heading,
      subtext: message,
      left: 'center',
      top: 'middle',
      textStyle: { fontFamily: FONT, color: COLORS.threshold, fontSize: 18 },
      subtextStyle: { fontFamily: FONT, color: COLORS.muted, fontSize: 13 },
    },
  });
}

function noteGraphic(text: string): object {
  return {
    type: 'text',
    left: 'center',
    top: 'middle',
    style: { text, fontFamily: FONT, fontSize: 14, fill: COLORS.muted },
  };
}
