/**
 * The markdown of a chat group robot (DingTalk's custom robot, WeCom's group robot): one text in the
 * small markdown dialect both clients render (headings, `**bold**`, `[label](url)` links, `>` quotes),
 * cut to the platform's byte limit. Pure: each channel wraps it in its own wire format.
 *
 * Alert text is written by whoever can set a label or an annotation, and neither platform documents an
 * escape for its markdown (a backslash shows as a backslash in one client and escapes in another). So
 * the characters that could start a link, an image, a mention, an HTML tag (WeCom's `<font>`, `<@userid>`)
 * or emphasis are shown as their full-width forms in alert text: `[`→`［`, `]`→`］`, `<`→`＜`, `>`→`＞`,
 * `*`→`＊`, `` ` ``→`｀`, `@`→`＠` (DingTalk highlights `@<mobile>` text as a mention), and `~`, `_` at a
 * word's edge (strike, emphasis). Alert text may also hold line breaks, so at the start of each of its lines
 * (and of the text itself, which may open a line of ours) what could start a block is shown the same way:
 * `#`, `|`, `-`, `+`, `=`, `:` (a heading, table row or delimiter, list item, rule, setext underline; the last
 * four when a space, the end of the line or `-`/`=` follows), the `.` or `)` of a numbered item (`1.`→`1．`),
 * and the line's indentation as no-break spaces (no code block; a blank line stays blank). A reader sees the
 * same text; no markup, link, mention or block comes from it. Label values (`model_name`, `instance`) hold
 * none of these characters in practice, so what an engineer copies from a message is unchanged.
 * @see https://spec.commonmark.org/0.31.2/#blocks-and-inlines (what opens a block at a line's start)
 */
import type { EnrichedAlert } from '../enrich/types.js';
import type { Notification } from '../render/notification.js';
import { cutAlert, REDUCED_FIELD_BYTES } from '../render/reduce.js';
import {
  acknowledgeLink,
  alertLines,
  alertLinks,
  followUpLines,
  headline,
  headlineText,
  isFiringAgain,
  type Link,
  type Markup,
  moreAlertsText,
} from '../render/content.js';
import { digestText, digestTitle, isStorm, type RenderOptions } from '../render/digest.js';
import { linkLabel, messages, type Locale } from '../render/locale.js';
import { truncateBytes, utf8Bytes } from '../core/truncate.js';
import { showFormattingMarks } from '../render/formatting-marks.js';

const FULL_WIDTH: Readonly<Record<string, string>> = {
  '[': '［',
  ']': '］',
  '<': '＜',
  '>': '＞',
  '*': '＊',
  '`': '｀',
  '@': '＠',
};

/** Marks that open a block at a line's start, as their full-width forms (`>` and `*` are always shown so). */
const BLOCK_MARK: Readonly<Record<string, string>> = {
  '#': '＃',
  '|': '｜',
  '-': '－',
  '+': '＋',
  '=': '＝',
  ':': '：',
  '.': '．',
  ')': '）',
};

/**
 * A line's start (`m`: after `\n`, `\r`, U+2028, U+2029, or the text's start), its indentation (spaces, tabs and
 * invisible format characters, counted as absent: a client may drop them), then a mark that could open a block.
 */
const LINE_START_MARK = /^([ \t\p{Cf}]*)([#|]|[-+=:](?=\p{Cf}*(?:[-=\s]|$))|\d[\d\p{Cf}]*[.)](?=\p{Cf}*(?:\s|$)))/gmu;
/**
 * A line's indentation: kept on a line of nothing else (a blank line), shown as no-break spaces otherwise, also at
 * the text's end (our markdown may follow it on that line).
 */
const INDENT = /^[ \t\p{Cf}]+/gmu;
const LINE_BREAK = /[\r\n\u2028\u2029]/;

/**
 * `text` with no line opening a block (see the file's header): one character for one, marks full-width,
 * indentation as no-break spaces.
 */
function showBlockMarks(text: string): string {
  return text
    .replace(LINE_START_MARK, (_, indent: string, mark: string) => indent + markAsText(mark))
    .replace(INDENT, (indent: string, at: number, all: string) =>
      LINE_BREAK.test(all[at + indent.length] ?? '') ? indent : indent.replace(/[ \t]/g, '\u00a0'),
    );
}

/** A block mark as text: its last character full-width (`#`→`＃`, `12.`→`12．`). */
const markAsText = (mark: string) => `${mark.slice(0, -1)}${BLOCK_MARK[mark.at(-1)!]}`;

/**
 * Alert text as text in a robot's markdown (see the file's header); also `~` (strike) and `_` (emphasis) where
 * they could open or close formatting (`shared/render/formatting-marks.ts`: `model_name` stays as typed).
 */
export const escapeRobotMarkdown = (text: string): string =>
  showBlockMarks(
    showFormattingMarks(
      text.replace(/[[\]<>*`@]/g, (c) => FULL_WIDTH[c]!),
      '_~',
    ),
  );

/** Bold as both dialects write it; no italics (WeCom's markdown has none). */
export const ROBOT_MARKUP: Markup = { bold: (s) => `**${s}**`, italic: (s) => s, escape: escapeRobotMarkdown };

/**
 * `[label](url)`. The URL is an http(s) link of ours or checked by `alertLinks`; the characters that
 * would end the link or break the markdown are percent-encoded.
 */
export function robotLink(link: Link, locale: Locale): string {
  const url = link.url.replace(/[()<>\s[\]]/g, (c) => encodeURIComponent(c));
  return `[${linkLabel(link.label, locale)}](${url})`;
}

/** How a robot's markdown is laid out. */
export interface RobotMarkdownOptions extends RenderOptions {
  /**
   * UTF-8 size limit of the text, bytes: alerts that do not fit are left out, whole (one too big alone goes
   * reduced).
   */
  maxBytes: number;
  /** Between two lines of one alert: `\n` (WeCom), `\n\n` (DingTalk's client joins single newlines). */
  lineBreak: string;
  /** Put first, before the headline (the @-mentions); its bytes are counted. */
  lead?: string;
  /** Makes the title carry the robot's security keyword (DingTalk); default unchanged. */
  titled?: (title: string) => string;
}

/** Room kept for the line saying what was left out, bytes (generous). */
const MORE_LINE_RESERVE_BYTES = 160;

/**
 * The title (a heading's text, also the notification preview) and the markdown text: a digest for a storm
 * ({@link isStorm}); else the headline, the Acknowledge link, then each alert's lines and links while the
 * text stays under `maxBytes`, then what was left out.
 * @param options.locale default `zh-CN`
 */
export function renderRobotMarkdown(
  notification: Notification,
  options: RobotMarkdownOptions,
): { title: string; text: string } {
  const locale = options.locale ?? 'zh-CN';
  const titled = options.titled ?? ((t: string) => t);
  const lead = options.lead ? [options.lead] : [];
  const joined = (parts: string[]) => truncateBytes(parts.join('\n\n'), options.maxBytes);
  if (notification.kind === 'acknowledged') {
    const title = titled(headlineText(headline(notification), locale));
    const lines = followUpLines(notification, ROBOT_MARKUP, locale).map((l) => l.replace(/\n/g, options.lineBreak));
    return { title, text: joined([...lead, heading(title), ...lines]) };
  }
  if (isStorm(notification, options.digestAbove)) return robotDigest(notification, options, locale, titled);
  const title = titled(headlineText(headline(notification), locale));
  const ack = acknowledgeLink(notification, locale);
  const head = [...lead, heading(title), ...(ack ? [`**[${ack.label}](${ack.url})**`] : [])];
  const paragraphs: string[] = [];
  let size = utf8Bytes(head.join('\n\n'));
  let shown = 0;
  const room = options.maxBytes - size - 2 - MORE_LINE_RESERVE_BYTES;
  for (const alert of notification.alerts) {
    let paragraph = alertParagraph(notification, alert, locale, options.lineBreak);
    if (utf8Bytes(paragraph) > room)
      paragraph = alertParagraph(notification, cutAlert(alert, REDUCED_FIELD_BYTES, true), locale, options.lineBreak);
    if (utf8Bytes(paragraph) > room) continue;
    const left = notification.alerts.length - shown - 1 + notification.truncatedAlerts;
    const reserve = left > 0 ? MORE_LINE_RESERVE_BYTES : 0;
    if (size + 2 + utf8Bytes(paragraph) + reserve > options.maxBytes) break;
    paragraphs.push(paragraph);
    size += 2 + utf8Bytes(paragraph);
    shown += 1;
  }
  const more = moreAlertsText(notification.alerts.length - shown, { truncated: notification.truncatedAlerts, locale });
  return { title, text: joined([...head, ...paragraphs, ...(more ? [more] : [])]) };
}

const heading = (title: string) => `### ${escapeRobotMarkdown(title)}`;

/** One alert: a rule, its lines, its links on one line. */
function alertParagraph(notification: Notification, alert: EnrichedAlert, locale: Locale, lineBreak: string): string {
  const lines = alertLines(alert, ROBOT_MARKUP, {
    locale,
    flapping: notification.flapping?.[alert.fingerprint],
    firingAgain: isFiringAgain(alert, notification),
  });
  const links = alertLinks(alert, notification.externalURL, notification.grafanaUrl).map((l) => robotLink(l, locale));
  return [...lines, ...(links.length ? [links.join(' · ')] : [])].join(lineBreak);
}

/** The storm digest; top alerts are dropped from the end while it is over `maxBytes`. */
function robotDigest(
  notification: Notification,
  options: RobotMarkdownOptions,
  locale: Locale,
  titled: (t: string) => string,
): { title: string; text: string } {
  const d = digestText(notification, ROBOT_MARKUP, locale);
  const title = titled(digestTitle(notification, locale));
  const ack = acknowledgeLink(notification, locale);
  const silence = d.silenceUrl
    ? `[${messages(locale).digest.silenceGroup}](${d.silenceUrl.replace(/[()<>\s]/g, encodeURIComponent)})`
    : '';
  const br = options.lineBreak;
  const build = (top: string[]) =>
    [
      ...(options.lead ? [options.lead] : []),
      heading(title),
      ...(ack ? [`**[${ack.label}](${ack.url})**`] : []),
      [...d.summary, ...d.counts, ...d.cause].join(br),
      [d.topTitle, ...top].join(br),
      d.more,
      silence,
    ]
      .filter(Boolean)
      .join('\n\n');
  let top = d.top;
  while (top.length > 0 && utf8Bytes(build(top)) > options.maxBytes) top = top.slice(0, -1);
  return { title, text: truncateBytes(build(top), options.maxBytes) };
}
