/**
 * AMP messages in the default body: the text of Alertmanager's `sns.default.message` template, which
 * AMP uses when the alert manager definition sets no `message`:
 *
 * ```text
 * <common annotation values, joined by " ">
 *
 * Alerts Firing:
 * Labels:
 *  - alertname = VLLMQueueBacklog
 *  - severity = warning
 * Annotations:
 *  - summary = llama-3.1-70b: 85 requests waiting
 * Source: http://prometheus:9090/graph?g0.expr=…
 * Labels:
 *  …
 *
 * Alerts Resolved:
 * …
 * ```
 * (`__text_alert_list` per alert: `Labels:`, ` - name = value` sorted by name, `Annotations:`, the same,
 * `Source: <generatorURL>`). Verified against Alertmanager 0.25's own template with `amtool template
 * render` (test/unit/amp/bodies.test.ts); the `{{- … -}}` variant AMP's samples show differs only
 * in blank lines, which are skipped between alerts.
 *
 * What the text does not carry, and what is used instead:
 * - `fingerprint`: computed from the labels exactly as Alertmanager does (the schema does it);
 * - `startsAt`: unknown, set to Go's zero time. That keeps the dedupe key of an alert the same across
 *   AMP's repeat notifications (a time of arrival would announce every repeat as new); channels show
 *   no start time for it. `endsAt` of a resolved alert: when AMP published the message;
 * - `groupKey`, `groupLabels`: made from the group labels the default subject names, else from the
 *   alerts' common labels (`default-text-group.ts`), so unrelated groups never share a thread;
 * - `externalURL`: unknown (no silence link); `receiver`: the caller's;
 * - `commonLabels`/`commonAnnotations`: what all parsed alerts share, as Alertmanager computes them.
 * A value spanning lines (a multi-line description) continues until the next line shaped like the
 * template's own. Such a line is always structure, never a value's text: a value can then add
 * structure but never hide any, so every alert and label the template wrote is read, and what a value
 * added breaks the template's rules (a pair out of name order, `Annotations:` twice, text between
 * alerts) or contradicts the rest of the message (`default-text-evidence.ts`: the subject's count and
 * label values, the opening line, an alert written twice). Either refuses the body: it is delivered
 * unparsed. The cost: a value holding a line like ` - name = value` is delivered unparsed too. The JSON
 * template has no such ambiguity. When AMP cut the message (attribute `truncated=true`), the last
 * alert begun is dropped (it may be cut anywhere, and cut labels give a wrong fingerprint) and counted
 * as left out, as are firing alerts the default subject (`[FIRING:3] …`) counts but the text lacks.
 * @see https://github.com/prometheus/alertmanager/blob/v0.25.0/template/default.tmpl (`sns.default.message`, `__text_alert_list`)
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-validation-truncation.html
 */
import { GO_ZERO_TIME, webhookSchema, type WebhookMessage } from '../alertmanager/schema.js';
import { common, contradiction, firingCount, type ReadAlert } from './default-text-evidence.js';
import { syntheticGroupKey } from './json-body.js';
import { defaultTextGroup } from './default-text-group.js';

export type TextBodyResult = { ok: true; message: WebhookMessage; lost: number } | { ok: false; reason: string };

export interface TextContext {
  /** AMP marked the message cut (attribute `truncated=true`). */
  truncated: boolean;
  /** The SNS `Subject`, when there is one (`[FIRING:2] VLLMQueueBacklog (queue warning)` by default). */
  subject?: string;
  /** The SNS message's `Timestamp` (RFC 3339): the `endsAt` of resolved alerts. */
  publishedAt: string;
  /** `receiver` of the message (the text has none). */
  receiver: string;
}

type Status = ReadAlert['status'];
interface Draft extends ReadAlert {
  generatorURL: string;
}

const SECTIONS: Record<string, Status> = { 'Alerts Firing:': 'firing', 'Alerts Resolved:': 'resolved' };
/** Whether a trimmed line is a section header (own keys only: a line reading `constructor` is text). */
const isSection = (trimmed: string) => Object.hasOwn(SECTIONS, trimmed);
/** A ` - name = value` line (names hold neither spaces nor "="; indentation before the dash is read as one space). */
const PAIR = /^ - ([^ =]+) = (.*)$/;

/**
 * Parses the default text body.
 * @returns `ok: false` with the reason when it is not that text, or when its values changed its
 *   structure (the caller delivers it unparsed)
 */
export function parseDefaultText(body: string, context: TextContext): TextBodyResult {
  const lines = body.split('\n');
  // A cut message's last line may be cut anywhere (and its alert is dropped below).
  const read = readAlerts(context.truncated ? lines.slice(0, -1) : lines, context.truncated);
  if (read === undefined) return { ok: false, reason: 'no "Alerts Firing:" or "Alerts Resolved:" section with labels' };
  if ('problem' in read) return { ok: false, reason: read.problem };
  const drafts = read.drafts;
  const kept = context.truncated ? drafts.slice(0, -1) : drafts;
  if (kept.length === 0) return { ok: false, reason: 'truncated before the first whole alert' };
  const opening = lines.slice(0, read.start).join('\n');
  const contradicted = contradiction(drafts, { opening, subject: context.subject, truncated: context.truncated });
  if (contradicted) return { ok: false, reason: contradicted };
  const lost = Math.max(
    drafts.length - kept.length,
    (firingCount(context.subject) ?? 0) - kept.filter((d) => d.status === 'firing').length,
    0,
  );
  const alerts = kept.map((d) => ({
    ...d,
    startsAt: GO_ZERO_TIME,
    endsAt: d.status === 'resolved' ? context.publishedAt : GO_ZERO_TIME,
  }));
  const commonLabels = common(kept.map((d) => d.labels));
  // A cut message lost alerts: its subject's split is of labels the read ones may not all share.
  const group = defaultTextGroup(commonLabels, context.truncated ? undefined : context.subject);
  const parsed = webhookSchema.safeParse({
    version: '4',
    groupKey: syntheticGroupKey(context.receiver, group.identity),
    truncatedAlerts: lost,
    status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved',
    receiver: context.receiver,
    groupLabels: group.groupLabels,
    commonLabels,
    commonAnnotations: common(kept.map((d) => d.annotations)),
    externalURL: '',
    alerts,
  });
  if (!parsed.success) return { ok: false, reason: `not an Alertmanager group: ${parsed.error.issues[0]!.message}` };
  return { ok: true, message: parsed.data, lost };
}

type Mode = 'labels' | 'annotations' | 'done';
interface Reader {
  drafts: Draft[];
  sections: Set<string>;
  status: Status;
  mode: Mode;
  /** The name of the pair read last in the current block (values continue it); `undefined` before the first. */
  lastKey?: string;
}

/**
 * The alerts of the text, in order, and the index of the first section header; `undefined` when it
 * has no section followed by `Labels:`; a `problem` when a line shaped like structure stands where the
 * template never writes it (a value's text writing structure). With `truncated`, the last alert may end anywhere.
 */
function readAlerts(
  lines: string[],
  truncated: boolean,
): { drafts: Draft[]; start: number } | { problem: string } | undefined {
  const start = lines.findIndex((line, i) => isSection(line.trim()) && nextNonBlank(lines, i + 1) === 'Labels:');
  if (start < 0) return undefined;
  const header = lines[start]!.trim();
  const r: Reader = { drafts: [], sections: new Set([header]), status: SECTIONS[header]!, mode: 'done' };
  for (const line of lines.slice(start + 1)) {
    const problem = r.mode === 'done' ? between(r, line.trim()) : inAlert(r, line);
    if (problem) return { problem };
  }
  if (r.mode !== 'done' && !truncated) return { problem: 'the last alert has no "Source:" line' };
  return r.drafts.length ? { drafts: r.drafts, start } : undefined;
}

/** A line between alerts: blank, a new alert's `Labels:`, or the resolved section's header. */
function between(r: Reader, trimmed: string): string | undefined {
  if (trimmed === '') return undefined;
  if (trimmed === 'Labels:') {
    r.drafts.push({ status: r.status, labels: {}, annotations: {}, generatorURL: '' });
    [r.mode, r.lastKey] = ['labels', undefined];
    return undefined;
  }
  // Firing, then resolved, each once: the template's order. Another header is a value's text.
  if (!isSection(trimmed)) return 'text between alerts where the template writes none';
  if (r.sections.has(trimmed) || SECTIONS[trimmed] === 'firing') return `"${trimmed}" out of place`;
  r.sections.add(trimmed);
  r.status = SECTIONS[trimmed]!;
  return undefined;
}

/** A line inside an alert: a pair, `Annotations:`, `Source:`, or the continuation of the last value. */
function inAlert(r: Reader, line: string): string | undefined {
  const trimmed = line.trim();
  const current = r.drafts.at(-1)!;
  const block = r.mode as 'labels' | 'annotations';
  const pair = PAIR.exec(line.replace(/^\s+-/, ' -'));
  if (pair) {
    // Names are written sorted, each once: a pair out of order is a value's text writing structure.
    if (r.lastKey !== undefined && pair[1]! <= r.lastKey) return `${block} pair "${pair[1]}" out of order`;
    r.lastKey = pair[1]!;
    current[block][r.lastKey] = pair[2]!;
  } else if (trimmed === 'Annotations:') {
    if (block === 'annotations') return '"Annotations:" twice in one alert';
    [r.mode, r.lastKey] = ['annotations', undefined];
  } else if (trimmed.startsWith('Source:')) {
    if (block === 'labels') return '"Source:" before "Annotations:"';
    current.generatorURL = trimmed.slice('Source:'.length).trim();
    r.mode = 'done';
  } else if (trimmed === 'Labels:' || isSection(trimmed)) return `"${trimmed}" inside an alert`;
  else if (r.lastKey === undefined) return `text in ${block} where the template writes only pairs`;
  else current[block][r.lastKey] += `\n${line}`;
  return undefined;
}

/** The first non-blank line at or after `from`, trimmed (`undefined` when none): one pass per section header. */
function nextNonBlank(lines: string[], from: number): string | undefined {
  for (let i = from; i < lines.length; i++) if (lines[i]!.trim() !== '') return lines[i]!.trim();
  return undefined;
}
