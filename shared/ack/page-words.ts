/**
 * The acknowledgement page's own words, in each language (`page.ts`, `page-alert.ts`, `routes.ts`).
 * Alert text, label names and values, names people typed and what Alertmanager or Prometheus said are
 * shown as they are; only these are translated. A word is text (escaped where the page puts it),
 * or {@link Html} when it carries markup or takes HTML (an isolated value) as an argument.
 */
import type { Locale } from '../core/locale.js';
import type { TokenProblem } from '../core/signed-token.js';
import { count } from '../render/locale.js';
import type { AlertAckResult } from './acknowledge.js';
import { h, type Html } from './escape.js';

type Outcome = AlertAckResult['outcome'];

export interface PageWords {
  /** `<html lang>`. */
  lang: string;
  title(name?: string): string;
  heading(n: number): string;
  linkFrom(channel: string): string;
  opening: string;
  nothingLeft: string;
  partial(total: number, named: number): string;
  all(n: number): string;
  /** What happened to one alert (`one`) or to several (`other`). */
  result: Record<Outcome, { one: string; other: string }>;
  silenced(id: Html): Html;
  silenceFailed(error: Html): Html;
  resultCount(n: number): string;
  /** An alert set's acknowledgement started now. */
  setStarted(n: number, by: Html, silenceHours?: number): Html;
  /** An alert set's acknowledgement decided before this request. */
  setDecided(n: number, by: Html, at: Html): Html;
  notified(channel: string, ok: boolean): string;
  channels(list: Html): Html;
  silenceFor: string;
  hours(h: number): string;
  ackAndSilence: string;
  yourName: string;
  namePlaceholder: string;
  acknowledge(total: number): string;
  previous: string;
  next: string;
  pageOf(page: number, pages: number): string;
  unknownAlert: string;
  alertHeading(fingerprint: Html): Html;
  firing: string;
  since(at: string, elapsed: string): string;
  resolved: string;
  resolvedAt(at: string): string;
  fired(at: string): string;
  notAcknowledged: string;
  /**
   * Who acknowledged, when, how long after it fired, from which channel's link, and the silence made with it;
   * `by` and `silence` are HTML (isolated), the rest is text.
   */
  acknowledgedBy(ack: { by: Html; at: string; after?: string; channel: string; silence?: Html }): Html;
  evidence: string;
  whenFired: string;
  atNotification: string;
  now: string;
  valuesNowUnavailable(reason: string): string;
  whenNotified(reason: string): string;
  memoryTrend: string;
  causeWhenNotified: string;
  causeNowToo: string;
  causeNow: string;
  chartAlt(name: string): string;
  grafanaValues: string;
  silenceIn(where: string): string;
  problems: {
    linkNotValid: string;
    token: Record<TokenProblem, string>;
    tryAgain: string;
    storeDown: string;
    tooLarge: string;
    tooLargeText: string;
    methodNotAllowed: string;
    openInBrowser: string;
    notAcknowledged: string;
    /** A replayed form: its nonce was taken. */
    formUsed: string;
    silenceHours(hours: readonly number[]): string;
  };
  /** Colon between a heading and its value. */
  colon: string;
}

const EN: PageWords = {
  lang: 'en',
  title: (name) => `Acknowledge${name ? `: ${name}` : ''}`,
  heading: (n) => `Acknowledge ${n === 1 ? 'alert' : `${count(n)} alerts`}`,
  linkFrom: (channel) => `Link from the ${channel} message.`,
  opening: 'Opening this page changes nothing; only the button below acknowledges.',
  nothingLeft: 'Nothing is left to acknowledge here.',
  partial: (total, named) =>
    `This link's list of ${count(total)} alerts could not be read; shown and acknowledged here: the ${count(named)} it names itself.`,
  all: (n) => `All ${count(n)} firing alerts the message carried; the button acknowledges them together.`,
  result: {
    acknowledged: { one: 'acknowledged', other: 'acknowledged' },
    'already acknowledged': { one: 'was already acknowledged', other: 'were already acknowledged' },
    resolved: { one: 'already resolved, nothing to acknowledge', other: 'already resolved, nothing to acknowledge' },
    'newer occurrence': {
      one: 'has fired again since this link was sent; use the newer message',
      other: 'have fired again since this link was sent; use the newer messages',
    },
    unknown: { one: 'unknown here', other: 'unknown here' },
  },
  silenced: (id) => h` · silenced (${id})`,
  silenceFailed: (error) => h` · silence failed: ${error}`,
  resultCount: (n) => `${count(n)} alerts`,
  setStarted: (n, by, hours) =>
    h`Acknowledging all ${count(n)} alerts as ${by}${hours ? `, and silencing them for ${hours} h` : ''}. It goes on in the background, about a thousand alerts every few seconds; the messages are updated as it goes, and this page shows each alert's state when reloaded.`,
  setDecided: (n, by, at) =>
    h`These ${count(n)} alerts were already acknowledged together by ${by} at ${at} (done, or still going on in the background). Nothing was changed.`,
  notified: (channel, ok) => `${channel} ${ok ? 'notified' : 'not notified (delivery failed)'}`,
  channels: (list) => h`Channels: ${list}.`,
  silenceFor: 'Silence for',
  hours: (h) => `${h} hour${h === 1 ? '' : 's'}`,
  ackAndSilence: 'Acknowledge and silence',
  yourName: 'Your name',
  namePlaceholder: 'on-call engineer',
  acknowledge: (total) => (total > 1 ? `Acknowledge all ${count(total)}` : 'Acknowledge'),
  previous: '← Previous',
  next: 'Next →',
  pageOf: (page, pages) => `Page ${page} of ${pages}`,
  unknownAlert: 'Unknown here: never notified by this service, or its record expired.',
  alertHeading: (fingerprint) => h`Alert ${fingerprint}`,
  firing: 'Firing',
  since: (at, elapsed) => ` since ${at} (${elapsed})`,
  resolved: 'Resolved',
  resolvedAt: (at) => ` at ${at}`,
  fired: (at) => ` · fired ${at}`,
  notAcknowledged: 'Not acknowledged yet.',
  acknowledgedBy: ({ by, at, after, channel, silence }) =>
    h`Acknowledged by <strong>${by}</strong> at ${at}${after && ` (${after} after it fired)`}, from the ${channel} link${silence && h` · silence ${silence}`}`,
  evidence: 'Evidence',
  whenFired: 'when fired',
  atNotification: 'at notification',
  now: 'now',
  valuesNowUnavailable: (reason) => `Values now: unavailable (${reason}); shown as kept from the notification.`,
  whenNotified: (reason) => `When notified: ${reason}.`,
  memoryTrend: 'Memory trend',
  causeWhenNotified: 'Likely cause (when notified)',
  causeNowToo: 'Now the evidence points to',
  causeNow: 'Likely cause (now)',
  chartAlt: (name) => `Chart of ${name}: its main signal from before it fired to now`,
  grafanaValues: 'Values (Grafana)',
  silenceIn: (where) => `Silence in ${where}`,
  problems: {
    linkNotValid: 'Link not valid',
    token: {
      malformed: 'This is not an acknowledgement link (the token is malformed).',
      forged:
        'This acknowledgement link is not valid: its signature does not match (altered or not issued by this service).',
      retired:
        'This acknowledgement link was signed with a key that has since been retired. Use a link from a newer message.',
      expired: 'This acknowledgement link has expired. Use a link from a newer message.',
    },
    tryAgain: 'Try again',
    storeDown: 'The acknowledgement store could not be reached. Nothing was changed; reload in a moment.',
    tooLarge: 'Form too large',
    tooLargeText: 'The form is larger than this page ever sends.',
    methodNotAllowed: 'Method not allowed',
    openInBrowser: 'Open the link in a browser.',
    notAcknowledged: 'Not acknowledged',
    formUsed: 'This form was already sent; it is taken once. Open the link again to see the alerts now.',
    silenceHours: (hours) => `Silences are offered for ${hours.join(', ')} hours when Alertmanager is configured.`,
  },
  colon: ': ',
};

const ZH_CN: PageWords = {
  lang: 'zh-CN',
  title: (name) => `认领告警${name ? `：${name}` : ''}`,
  heading: (n) => (n === 1 ? '认领告警' : `认领 ${count(n)} 条告警`),
  linkFrom: (channel) => `链接来自 ${channel} 的消息。`,
  opening: '打开本页不会改变任何状态，只有点下面的按钮才会认领。',
  nothingLeft: '这里已没有需要认领的告警。',
  partial: (total, named) =>
    `读取不到这个链接的 ${count(total)} 条告警列表；这里只列出并认领链接本身带的 ${count(named)} 条。`,
  all: (n) => `消息里的全部 ${count(n)} 条告警；按钮会一起认领。`,
  result: {
    acknowledged: { one: '已认领', other: '已认领' },
    'already acknowledged': { one: '之前已被认领', other: '之前已被认领' },
    resolved: { one: '已恢复，无需认领', other: '已恢复，无需认领' },
    'newer occurrence': {
      one: '发出此链接后又触发了一次，请用新消息里的链接',
      other: '发出此链接后又触发了，请用新消息里的链接',
    },
    unknown: { one: '本服务没有记录', other: '本服务没有记录' },
  },
  silenced: (id) => h` · 已静默（${id}）`,
  silenceFailed: (error) => h` · 静默失败：${error}`,
  resultCount: (n) => `${count(n)} 条告警`,
  setStarted: (n, by, hours) =>
    h`正在以 ${by} 的名义认领全部 ${count(n)} 条告警${hours ? `，并静默 ${hours} 小时` : ''}。认领在后台进行，每几秒约一千条；消息会随之更新，刷新本页可看到每条告警的状态。`,
  setDecided: (n, by, at) =>
    h`这 ${count(n)} 条告警已由 ${by} 于 ${at} 一并认领（已完成或仍在后台进行），本次没有改变任何内容。`,
  notified: (channel, ok) => `${channel} ${ok ? '已通知' : '通知失败'}`,
  channels: (list) => h`通知渠道：${list}。`,
  silenceFor: '静默时长',
  hours: (h) => `${h} 小时`,
  ackAndSilence: '认领并静默',
  yourName: '你的名字',
  namePlaceholder: '值班工程师',
  acknowledge: (total) => (total > 1 ? `全部认领（${count(total)} 条）` : '认领'),
  previous: '← 上一页',
  next: '下一页 →',
  pageOf: (page, pages) => `第 ${page} / ${pages} 页`,
  unknownAlert: '本服务没有这条告警的记录：从未由本服务通知过，或记录已过期。',
  alertHeading: (fingerprint) => h`告警 ${fingerprint}`,
  firing: '告警中',
  since: (at, elapsed) => `，开始于 ${at}（已持续 ${elapsed}）`,
  resolved: '已恢复',
  resolvedAt: (at) => `，恢复于 ${at}`,
  fired: (at) => ` · 触发于 ${at}`,
  notAcknowledged: '还没有人认领。',
  acknowledgedBy: ({ by, at, after, channel, silence }) =>
    h`<strong>${by}</strong> 于 ${at} 认领${after && `（触发后 ${after}）`}，通过 ${channel} 的链接${silence && h` · 静默 ${silence}`}`,
  evidence: '指标',
  whenFired: '触发时',
  atNotification: '通知时',
  now: '现在',
  valuesNowUnavailable: (reason) => `当前值：获取失败（${reason}），下面是通知时记录的值。`,
  whenNotified: (reason) => `通知时：${reason}。`,
  memoryTrend: '显存趋势',
  causeWhenNotified: '可能原因（通知时）',
  causeNowToo: '现在的指标指向',
  causeNow: '可能原因（现在）',
  chartAlt: (name) => `${name} 的趋势图：主要指标从触发前到现在的走势`,
  grafanaValues: 'Grafana 取值',
  silenceIn: (where) => `在 ${where} 中静默`,
  problems: {
    linkNotValid: '链接无效',
    token: {
      malformed: '这不是认领链接（格式不对）。',
      forged: '认领链接无效：签名对不上（链接被改过，或不是本服务发出的）。',
      retired: '这个认领链接的签名密钥已经停用，请用新消息里的链接。',
      expired: '这个认领链接已过期，请用新消息里的链接。',
    },
    tryAgain: '请重试',
    storeDown: '连不上认领记录的存储，没有做任何改动；请稍后刷新。',
    tooLarge: '表单太大',
    tooLargeText: '表单超出了本页会提交的大小。',
    methodNotAllowed: '不支持的请求方法',
    openInBrowser: '请在浏览器中打开此链接。',
    notAcknowledged: '未认领',
    formUsed: '这个表单已经提交过，每个表单只能提交一次。请重新打开链接查看告警现在的状态。',
    silenceHours: (hours) => `配置了 Alertmanager 时可静默 ${hours.join('、')} 小时。`,
  },
  colon: '：',
};

const WORDS: Readonly<Record<Locale, PageWords>> = { en: EN, 'zh-CN': ZH_CN };

/** The page's words in `locale` (default `en`). */
export const pageWords = (locale: Locale = 'en'): PageWords => WORDS[locale];
