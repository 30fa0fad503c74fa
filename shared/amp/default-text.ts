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
 * render` (test/unit/amp/default-text.test.ts); the `{{- … -}}` variant AMP's samples show differs only
 * in blank lines, which are skipped between alerts.
 *
 * What the text does not carry, and what is used instead:
 * - `fingerprint`: computed from the labels exactly as Alertmanager does (the schema does it);
 * - `startsAt`: unknown, set to Go's zero time. That keeps the dedupe key of an alert the same across
 *   AMP's repeat notifications (a time of arrival would announce every repeat as new); channels show
 *   no start time for it. `endsAt` of a resolved alert: when AMP published the message;
 * - `groupKey`, `groupLabels`, `externalURL`: unknown (no silence link); `receiver`: the caller's;
 * - `commonLabels`/`commonAnnotations`: what all parsed alerts share, as Alertmanager computes them.
 * A value spanning lines (a multi-line description) continues until the next ` - name = value` line
 * whose name sorts after the previous one (the template prints pairs sorted by name), `Annotations:` or
 * `Source:`. The text is ambiguous there: a value line that looks like a later pair or like `Source:`
 * is read as one; the JSON template has no such ambiguity. When AMP cut the message (attribute `truncated=true`), the last
 * alert begun is dropped (it may be cut anywhere, and cut labels give a wrong fingerprint) and counted
 * as left out, as are firing alerts the default subject (`[FIRING:3] …`) counts but the text lacks.
 * @see https://github.com/prometheus/alertmanager/blob/v0.25.0/template/default.tmpl (`sns.default.message`, `__text_alert_list`)
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-validation-truncation.html
 */
import { GO_ZERO_TIME, webhookSchema, type WebhookMessage } from '../alertmanager/schema.js';
import { syntheticGroupKey } from './json-body.js';

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

type Status = 'firing' | 'resolved';
interface Draft {
  status: Status;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  generatorURL: string;
}

const SECTIONS: Record<string, Status> = { 'Alerts Firing:': 'firing', 'Alerts Resolved:': 'resolved' };
const PAIR = /^ - (.+?) = (.*)$/;

/**
 * Parses the default text body.
 * @returns `ok: false` with the reason when it is not that text (the caller delivers it unparsed)
 */
export function parseDefaultText(body: string, context: TextContext): TextBodyResult {
  const drafts = readAlerts(body.split('\n'));
  if (drafts === undefined) return { ok: false, reason: 'no "Alerts Firing:" or "Alerts Resolved:" section with labels' };
  const kept = context.truncated ? drafts.slice(0, -1) : drafts;
  if (kept.length === 0) return { ok: false, reason: 'truncated before the first whole alert' };
  const lost = Math.max(drafts.length - kept.length, firingCount(context.subject) - kept.filter((d) => d.status === 'firing').length, 0);
  const alerts = kept.map((d) => ({ ...d, startsAt: GO_ZERO_TIME, endsAt: d.status === 'resolved' ? context.publishedAt : GO_ZERO_TIME }));
  const parsed = webhookSchema.safeParse({
    version: '4',
    groupKey: syntheticGroupKey(context.receiver, {}),
    truncatedAlerts: lost,
    status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved',
    receiver: context.receiver,
    groupLabels: {},
    commonLabels: common(kept.map((d) => d.labels)),
    commonAnnotations: common(kept.map((d) => d.annotations)),
    externalURL: '',
    alerts,
  });
  if (!parsed.success) return { ok: false, reason: `not an Alertmanager group: ${parsed.error.issues[0]!.message}` };
  return { ok: true, message: parsed.data, lost };
}

/** The alerts of the text, in order; `undefined` when it has no section followed by `Labels:`. */
function readAlerts(lines: string[]): Draft[] | undefined {
  const start = lines.findIndex(
    (line, i) =>
      line.trim() in SECTIONS &&
      lines
        .slice(i + 1)
        .find((l) => l.trim() !== '')
        ?.trim() === 'Labels:',
  );
  if (start < 0) return undefined;
  const drafts: Draft[] = [];
  let status: Status = SECTIONS[lines[start]!.trim()]!;
  let current: Draft | undefined;
  let mode: 'labels' | 'annotations' | 'done' = 'done';
  let lastKey: string | undefined;
  for (const line of lines.slice(start + 1)) {
    const trimmed = line.trim();
    const pair = PAIR.exec(line.replace(/^\s+-/, ' -'));
    if (mode === 'done' && trimmed in SECTIONS) status = SECTIONS[trimmed]!;
    else if (trimmed === 'Labels:' && mode === 'done') {
      current = { status, labels: {}, annotations: {}, generatorURL: '' };
      drafts.push(current);
      [mode, lastKey] = ['labels', undefined];
    } else if (!current || mode === 'done') continue;
    else if (trimmed === 'Annotations:') [mode, lastKey] = ['annotations', undefined];
    else if (pair && (lastKey === undefined || pair[1]! > lastKey)) {
      lastKey = pair[1]!;
      current[mode][lastKey] = pair[2]!;
    } else if (trimmed.startsWith('Source:')) {
      current.generatorURL = trimmed.slice('Source:'.length).trim();
      mode = 'done';
    } else if (lastKey !== undefined) current[mode][lastKey] += `\n${line}`;
  }
  return drafts.length ? drafts : undefined;
}

/** Firing alerts the default subject (`[FIRING:3] …`, Alertmanager's `__subject`) counts; 0 when it has no count. */
function firingCount(subject: string | undefined): number {
  const m = /^\[FIRING:(\d+)\]/.exec(subject ?? '');
  return m ? Number(m[1]) : 0;
}

/** The pairs every set has with the same value (Alertmanager's `commonLabels`). */
function common(sets: Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = sets;
  return Object.fromEntries(Object.entries(first ?? {}).filter(([k, v]) => rest.every((s) => Object.hasOwn(s, k) && s[k] === v)));
}
