/**
 * AMP messages whose body is JSON in the Alertmanager webhook's shape: the template the project ships
 * (`infra/amp/alertmanager-definition.yml`, webhook payload version 4 plus `alertsTotal`), and AMP's
 * own documented JSON template (same field names, no `version`/`groupKey`, times as Go prints them).
 *
 * Three things differ from a webhook POST, and are handled here:
 * - Go's `printf "%q"` quoting, which the shipped template uses, is JSON's except for `\a`, `\v`,
 *   `\xNN` and `\UNNNNNNNN`: those are rewritten to JSON escapes before parsing.
 * - Times may be Go `time.Time.String()` values (`go-time.ts`).
 * - AMP cuts a message over 256 KB (attribute `truncated=true`): the body is then a JSON prefix. The
 *   group's fields (first in the shipped template) and every alert object that arrived whole are kept;
 *   the alerts lost in the cut count as `truncatedAlerts` (from `alertsTotal`, else at least one).
 *   A partial alert object is never used: its labels, and so its fingerprint, would be wrong.
 *   Written here because no JSON library tells which array elements of a cut document were complete.
 *
 * A body that holds a key twice or is not exactly a group's shape (`strict-json.ts`: values pasted raw
 * by AMP's documented template can write structure) is refused, as a broken one is.
 *
 * `groupKey` is not in Alertmanager's template data, so it is made from the receiver and the group
 * labels (`amp/<receiver>:{alertname="…"}`); it is for display only, never for dedupe.
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-JSON.html
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-validation-truncation.html
 * @see https://pkg.go.dev/strconv#Quote (what `%q` writes)
 */
import { webhookSchema, type WebhookMessage } from '../alertmanager/schema.js';
import { normalizeTime } from './go-time.js';
import { duplicateKey, shapeProblem } from './strict-json.js';

/** A parsed body, or why not. `lost`: alert objects cut off by AMP's truncation (0 when whole). */
export type JsonBodyResult = { ok: true; message: WebhookMessage; lost: number } | { ok: false; reason: string };

/**
 * Parses a JSON body from AMP into a webhook message.
 * @param body the SNS `Message`, as AMP published it
 * @param truncated whether AMP marked it cut (message attribute `truncated=true`). Only then is a body
 *   that does not parse whole read as a cut prefix: a body broken mid-way (an unescaped quote from a
 *   template that does not quote values) would otherwise lose every alert after the break as "cut"
 *   — unparsed, it reaches the channels whole, as raw text, and is counted.
 * @returns `ok: false` with the reason when it is not such JSON (the caller delivers it unparsed)
 */
export function parseJsonBody(body: string, truncated: boolean): JsonBodyResult {
  const text = goEscapesToJson(body);
  const whole = tryParse(text);
  if (whole !== undefined) {
    const twice = duplicateKey(text);
    if (twice !== undefined) return { ok: false, reason: `key ${JSON.stringify(twice)} twice in one object` };
    return toMessage(whole, 0);
  }
  if (!truncated) return { ok: false, reason: 'malformed JSON (not marked truncated by AMP)' };
  const salvaged = salvagePrefix(text);
  if (!salvaged)
    return { ok: false, reason: truncated ? 'truncated JSON without a whole group header' : 'malformed JSON' };
  return toMessage(salvaged.group, salvaged.lost);
}

function toMessage(raw: unknown, lost: number): JsonBodyResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, reason: 'JSON is not an object' };
  const group = raw as Record<string, unknown>;
  if (!Array.isArray(group.alerts)) return { ok: false, reason: 'JSON has no "alerts" array' };
  const shape = shapeProblem(group, group.alerts);
  if (shape) return { ok: false, reason: `not exactly an Alertmanager group: ${shape}` };
  const alerts = group.alerts.map((a) =>
    typeof a === 'object' && a !== null ? withTimes(a as Record<string, unknown>) : a,
  );
  // `alertsTotal` (the shipped template) says exactly how many the cut lost; without it, at least one.
  const cutOff = typeof group.alertsTotal === 'number' ? Math.max(0, group.alertsTotal - alerts.length) : lost;
  const truncatedAlerts = (typeof group.truncatedAlerts === 'number' ? group.truncatedAlerts : 0) + cutOff;
  const candidate = {
    ...group,
    version: group.version ?? '4',
    groupKey:
      typeof group.groupKey === 'string' ? group.groupKey : syntheticGroupKey(group.receiver, group.groupLabels),
    externalURL: group.externalURL ?? '',
    groupLabels: group.groupLabels ?? {},
    commonLabels: group.commonLabels ?? {},
    commonAnnotations: group.commonAnnotations ?? {},
    truncatedAlerts,
    alerts,
  };
  const parsed = webhookSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: `not an Alertmanager group: ${issue.path.join('.') || '(root)'}: ${issue.message}` };
  }
  return { ok: true, message: parsed.data, lost: cutOff };
}

/** `startsAt`/`endsAt` in RFC 3339 (a value that is neither form is left for the schema to refuse). */
function withTimes(alert: Record<string, unknown>): Record<string, unknown> {
  const out = { ...alert };
  for (const key of ['startsAt', 'endsAt'] as const) {
    if (typeof out[key] === 'string') out[key] = normalizeTime(out[key] as string) ?? out[key];
  }
  return out;
}

/** `amp/<receiver>:{name="value",…}`, group labels sorted by name as Alertmanager prints a label set. */
export function syntheticGroupKey(receiver: unknown, groupLabels: unknown): string {
  const labels =
    typeof groupLabels === 'object' && groupLabels !== null
      ? Object.entries(groupLabels as Record<string, unknown>)
      : [];
  const set = labels
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${JSON.stringify(String(v))}`)
    .join(',');
  return `amp/${typeof receiver === 'string' ? receiver : ''}:{${set}}`;
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Rewrites `\a`, `\v`, `\xNN`, `\UNNNNNNNN` (Go string escapes) to JSON's `\uNNNN` forms, in one pass
 * from backslash to backslash; `\\` is stepped over whole, so an escaped backslash is never read as the
 * start of one. (A replacement callback per escape cost ~0.3 µs a character on a body of backslashes.)
 */
export function goEscapesToJson(text: string): string {
  let out = '';
  let copied = 0;
  for (let i = text.indexOf('\\'); i >= 0; i = text.indexOf('\\', i)) {
    const found = goEscapeAt(text, i);
    if (found.json !== undefined) {
      out += text.slice(copied, i) + found.json;
      copied = i + found.length;
    }
    i += found.length;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

const HEX = /^[0-9a-fA-F]+$/;

/** The Go escape at `i` (a backslash): its length, and its JSON form when JSON lacks it. */
function goEscapeAt(text: string, i: number): { length: number; json?: string } {
  const kind = text[i + 1];
  if (kind === 'a') return { length: 2, json: '\\u0007' };
  if (kind === 'v') return { length: 2, json: '\\u000b' };
  const digits = kind === 'x' ? 2 : kind === 'U' ? 8 : 0;
  const hex = text.slice(i + 2, i + 2 + digits);
  if (digits === 0 || hex.length !== digits || !HEX.test(hex)) return { length: kind === undefined ? 1 : 2 };
  const code = parseInt(hex, 16);
  const json = [...String.fromCodePoint(code <= 0x10ffff ? code : 0xfffd)]
    .flatMap((c) => c.split(''))
    .map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .join('');
  return { length: 2 + digits, json };
}

const ALERTS_KEY = '"alerts":';

/**
 * The group of a cut body: everything before `"alerts":` closed as an object, with the alert objects
 * that are complete. `undefined` when the group's fields themselves are cut.
 */
function salvagePrefix(text: string): { group: Record<string, unknown>; lost: number } | undefined {
  const at = text.indexOf(ALERTS_KEY);
  if (at < 0) return undefined;
  const head = tryParse(`${text.slice(0, at)}"alerts":[]}`);
  if (typeof head !== 'object' || head === null) return undefined;
  let i = text.indexOf('[', at + ALERTS_KEY.length);
  if (i < 0) return undefined;
  const alerts: unknown[] = [];
  for (;;) {
    i = skip(text, i + 1, /[\s,]/);
    if (text[i] !== '{') break;
    const end = objectEnd(text, i);
    if (end < 0) return { group: { ...head, alerts }, lost: 1 };
    const alert = tryParse(text.slice(i, end + 1));
    if (alert === undefined) return { group: { ...head, alerts }, lost: 1 };
    alerts.push(alert);
    i = end;
  }
  return { group: { ...head, alerts }, lost: text[i] === ']' ? 0 : 1 };
}

function skip(text: string, from: number, chars: RegExp): number {
  let i = from;
  while (i < text.length && chars.test(text[i]!)) i += 1;
  return i;
}

/** Index of the `}` closing the object opened at `start`, skipping strings; -1 when the text ends first. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i += 1) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i += 1;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth += 1;
    else if (c === '}' && --depth === 0) return i;
  }
  return -1;
}
