/**
 * The words of a notification in each supported language. Label names and values, alert
 * annotations and signal labels are shown as sent (they are identifiers or the rule author's text);
 * only the pipeline's own words are translated. Numbers keep `en-US` grouping (`1,497`), which
 * zh-CN readers use too.
 */
import { lazy } from '../core/lazy.js';
import { EN_TREND_WORDS, ZH_TREND_WORDS, type TrendWords } from '../enrich/values.js';
import type { Locale } from '../core/locale.js';

/** The links every channel may show under an alert (their words are per locale). */
export type LinkLabel = 'Graph' | 'Rule' | 'Chart' | 'Grafana' | 'Dashboard' | 'Runbook' | 'Silence';

export { LOCALES, type Locale } from '../core/locale.js';

// Built on first use: the first Intl object of a process loads ICU data (Lambda cold init; see shared/core/lazy.ts).
const grouped = lazy(() => new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }));
/**
 * `1497` → `1,497`. An integer 0–999 reads the same without grouping, so it skips Intl: `format` costs
 * ~0.4 µs a call, `String` ~30× less, and renderers ask for counts per alert they try to fit.
 */
export const count = (n: number): string =>
  Number.isInteger(n) && n >= 0 && n < 1000 && !Object.is(n, -0) ? String(n) : grouped().format(n);

export interface Messages {
  firing: string;
  resolved: string;
  flapping: string;
  /** Header status of a group whose firing alerts all fire again after an announced resolve. */
  firingAgain: string;
  /** The line under such an alert. */
  firingAgainLine: string;
  /** Header stand-in when the group has no alert name. */
  alerts: string;
  started: string;
  ended: string;
  memoryTrend: string;
  /** The memory trend line's own words (growth, time to full, why no forecast). */
  trend: TrendWords;
  /** What a trend was fitted on: `Theil–Sen fit over 2.5 h, since a restart at …` (parts already formatted). */
  trendBasis: {
    fit(theilSen: boolean, window: string): string;
    sinceRestart(at: string): string;
    ofSeries(series: string): string;
    join: string;
  };
  /**
   * The three lines of a likely cause: its name, the evidence, what to try (the rule's own text follows
   * each, after `colon`; evidence items joined with `separator`).
   */
  likelyCause: { cause: string; evidence: string; try: string; colon: string; separator: string };
  /** A signal with no series (Prometheus returned none): never shown as 0. */
  noData: string;
  /** A per-request signal over a window without requests (NaN). */
  noRequests: string;
  /** Another signal that read NaN. */
  noDataNaN: string;
  memoryOverWindow: string;
  /** Legend of values shown as `value when fired → value now`. */
  /**
   * The one line standing for the signals a server has no series for (now nor when fired): their
   * count and labels, instead of a `no data` each; `engine` when it is the engine that has no such
   * metric (`SGLang`), not this server's series that are missing.
   */
  notExposed(signals: number, labels: string, engine?: string): string;
  whenFiredNow: string;
  enrichmentUnavailable(reason: string): string;
  /** Alerts this message leaves out, `n` ≥ 1. */
  moreAlerts(n: number): string;
  /** Alerts Alertmanager left out of the payload (`truncatedAlerts`), `n` ≥ 1. */
  notIncluded(n: number): string;
  /** A flapping alert: fired `times` times since `since` (already formatted). */
  flappingLine(times: number, since: string): string;
  /** An alert whose fields (`description`, `model_name`, …) were cut or repaired; starts with `(cut)`. */
  cutLine(fields: string[]): string;
  /** Label of the line of Grafana's values (its rule's expression results, `B=0.97 · C=1`). */
  grafanaValues: string;
  links: Record<LinkLabel, string>;
  digest: {
    title: string;
    received(n: number): string;
    firing(n: number): string;
    resolved(n: number): string;
    bySeverity: string;
    byAlertname: string;
    byModel: string;
    noLabel: string;
    /** Entries of a count list not shown. */
    moreEntries(n: number): string;
    top(n: number): string;
    /** The top list's heading when it is ordered by value too. */
    topByValue(n: number): string;
    /** Heading of the likely cause that `n` of `total` alerts share. */
    sharedCause(n: number, total: number): string;
    /** Who acknowledged `n` of the `total` alerts: `people` lists them (one: with when, several: with how many each). */
    acknowledged(people: string, n: number, total: number): string;
    /** One person of {@link acknowledged} alone: name and when (already formatted). */
    ackedAt(by: string, at: string): string;
    silenceGroup: string;
  };
}

const EN: Messages = {
  firing: 'FIRING',
  resolved: 'RESOLVED',
  flapping: 'FLAPPING',
  firingAgain: 'FIRING AGAIN',
  firingAgainLine: 'Firing again: it was reported resolved, and it still fires',
  alerts: 'alerts',
  started: 'Started',
  ended: 'Ended',
  memoryTrend: 'Memory trend',
  trend: EN_TREND_WORDS,
  trendBasis: {
    fit: (theilSen, window) => `${theilSen ? 'Theil–Sen fit' : 'fit'} over ${window}`,
    sinceRestart: (at) => `since a restart at ${at}`,
    ofSeries: (series) => `of ${series}`,
    join: ', ',
  },
  likelyCause: { cause: 'Likely cause', evidence: 'Evidence', try: 'Try', colon: ': ', separator: '; ' },
  noData: 'no data',
  noRequests: 'no requests',
  noDataNaN: 'no data (NaN)',
  memoryOverWindow: 'Memory over the window',
  whenFiredNow: 'When fired → now',
  notExposed: (n, labels, engine) =>
    `${count(n)} ${n === 1 ? 'signal' : 'signals'} not exposed by ${engine ?? 'this server'}: ${labels}`,
  enrichmentUnavailable: (reason) => `enrichment unavailable: ${reason}`,
  moreAlerts: (n) => `+${count(n)} more alert${n === 1 ? '' : 's'}`,
  notIncluded: (n) => `+${count(n)} not included by Alertmanager`,
  flappingLine: (times, since) => `Flapping: fired ${count(times)} times since ${since}`,
  cutLine: (fields) => `(cut) too long or not valid text, shown in part: ${fields.join(', ')}`,
  grafanaValues: 'Values',
  links: {
    Graph: 'Graph',
    Rule: 'Rule',
    Chart: 'Chart',
    Grafana: 'Grafana',
    Dashboard: 'Dashboard',
    Runbook: 'Runbook',
    Silence: 'Silence',
  },
  digest: {
    title: 'Alert storm',
    received: (n) => `${count(n)} new alert${n === 1 ? '' : 's'} in this group`,
    firing: (n) => `${count(n)} firing`,
    resolved: (n) => `${count(n)} resolved`,
    bySeverity: 'By severity',
    byAlertname: 'By alert',
    byModel: 'By model',
    noLabel: '(none)',
    moreEntries: (n) => `+${count(n)} more`,
    top: (n) => `Top ${count(n)} by severity`,
    topByValue: (n) => `Top ${count(n)} by severity, then value`,
    sharedCause: (n, total) => `Likely cause of ${count(n)} of ${count(total)} alerts`,
    acknowledged: (people, n, total) => `Acknowledged by ${people} (${count(n)} of ${count(total)} alerts)`,
    ackedAt: (by, at) => `${by} at ${at}`,
    silenceGroup: 'Silence group',
  },
};

const ZH_CN: Messages = {
  firing: '告警',
  resolved: '已恢复',
  flapping: '抖动',
  firingAgain: '再次告警',
  firingAgainLine: '再次告警：此前已报告恢复，但仍在触发',
  alerts: '告警',
  started: '开始于',
  ended: '结束于',
  memoryTrend: '显存趋势',
  trend: ZH_TREND_WORDS,
  trendBasis: {
    fit: (theilSen, window) => `${theilSen ? 'Theil–Sen 拟合' : '拟合'}，时间窗 ${window}`,
    sinceRestart: (at) => `自 ${at} 重启以来`,
    ofSeries: (series) => `序列 ${series}`,
    join: '，',
  },
  likelyCause: { cause: '可能原因', evidence: '依据', try: '建议', colon: '：', separator: '；' },
  noData: '无数据',
  noRequests: '无请求',
  noDataNaN: '无数据（NaN）',
  memoryOverWindow: '窗口内显存',
  whenFiredNow: '触发时 → 现在',
  notExposed: (n, labels, engine) => `${engine ?? '此服务器'}未暴露的 ${count(n)} 项指标：${labels}`,
  enrichmentUnavailable: (reason) => `补充信息不可用：${reason}`,
  moreAlerts: (n) => `另有 ${count(n)} 条告警`,
  notIncluded: (n) => `另有 ${count(n)} 条未被 Alertmanager 包含`,
  flappingLine: (times, since) => `抖动：自 ${since} 起已触发 ${count(times)} 次`,
  cutLine: (fields) => `(cut) 内容过长或不是有效文本，仅显示部分：${fields.join('、')}`,
  grafanaValues: '取值',
  links: {
    Graph: 'Prometheus 图表',
    Rule: '告警规则',
    Chart: '趋势图',
    Grafana: 'Grafana 看板',
    Dashboard: '仪表盘',
    Runbook: '处理手册',
    Silence: '静默',
  },
  digest: {
    title: '告警风暴',
    received: (n) => `本组新增 ${count(n)} 条告警`,
    firing: (n) => `${count(n)} 条告警中`,
    resolved: (n) => `${count(n)} 条已恢复`,
    bySeverity: '按级别',
    byAlertname: '按告警名',
    byModel: '按模型',
    noLabel: '（无）',
    moreEntries: (n) => `另有 ${count(n)} 项`,
    top: (n) => `最严重的 ${count(n)} 条`,
    topByValue: (n) => `最严重的 ${count(n)} 条（同级按数值）`,
    sharedCause: (n, total) => `${count(total)} 条告警中 ${count(n)} 条的可能原因`,
    acknowledged: (people, n, total) => `由 ${people} 认领（${count(total)} 条中 ${count(n)} 条）`,
    ackedAt: (by, at) => `${by}（${at}）`,
    silenceGroup: '静默本组',
  },
};

const MESSAGES: Record<Locale, Messages> = { en: EN, 'zh-CN': ZH_CN };

/** The words for `locale`. */
export function messages(locale: Locale = 'en'): Messages {
  return MESSAGES[locale];
}

/** A link's label in `locale`; labels without a translation are shown as they are. */
export function linkLabel(label: string, locale: Locale = 'en'): string {
  return (MESSAGES[locale].links as Record<string, string>)[label] ?? label;
}
