/**
 * Checks that a JSON body from AMP is exactly the shape of an Alertmanager group, before it is
 * believed. AMP's documented JSON template pastes values raw between quotes (`"{{ .Value }}"`), so a
 * label value (a scraped target can set one) may close its string and write structure: declare
 * `"alerts"` again (`JSON.parse` keeps the last), add an alert, or hide the real ones under a key of
 * its own. Such a body is refused and delivered unparsed, as a broken one is:
 * - no object may hold a key twice;
 * - the group and each alert hold only the fields Alertmanager's template data has;
 * - every alert carries the group labels and the common labels, and a `fingerprint` that is its
 *   labels' (Alertmanager's own), so an alert written by a value does not pass for one of the group's.
 * @see https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-JSON.html
 */
import { labelSetFingerprint } from '../alertmanager/fingerprint.js';

const GROUP_KEYS = new Set([
  'version',
  'groupKey',
  'truncatedAlerts',
  'status',
  'receiver',
  'groupLabels',
  'commonLabels',
  'commonAnnotations',
  'externalURL',
  'alerts',
  'alertsTotal',
]);
const ALERT_KEYS = new Set(['status', 'labels', 'annotations', 'startsAt', 'endsAt', 'generatorURL', 'fingerprint']);

/**
 * The first key that appears twice in one object of `text` (well-formed JSON), or `undefined`; one
 * pass over the text.
 */
export function duplicateKey(text: string): string | undefined {
  const stack: (Set<string> | undefined)[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '{') {
      stack.push(new Set());
      expectKey = true;
    } else if (c === '[') stack.push(undefined);
    else if (c === '}' || c === ']') stack.pop();
    else if (c === ',') expectKey = stack.at(-1) !== undefined;
    else if (c === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
      const keys = stack.at(-1);
      if (expectKey && keys) {
        const key = JSON.parse(text.slice(start, i + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
      }
      expectKey = false;
    }
  }
  return undefined;
}

/** Why a parsed group is not exactly an Alertmanager group's shape, or `undefined` when it is. */
export function shapeProblem(group: Record<string, unknown>, alerts: unknown[]): string | undefined {
  const extra = Object.keys(group).find((k) => !GROUP_KEYS.has(k));
  if (extra !== undefined) return `unexpected group field ${JSON.stringify(extra)}`;
  const shared = { ...labelsOf(group.groupLabels), ...labelsOf(group.commonLabels) };
  for (const [i, raw] of alerts.entries()) {
    if (typeof raw !== 'object' || raw === null) return `alerts.${i} is not an object`;
    const alert = raw as Record<string, unknown>;
    const field = Object.keys(alert).find((k) => !ALERT_KEYS.has(k));
    if (field !== undefined) return `alerts.${i}: unexpected field ${JSON.stringify(field)}`;
    const labels = labelsOf(alert.labels);
    if (Object.entries(shared).some(([k, v]) => labels[k] !== v))
      return `alerts.${i} lacks a group or common label: not an alert of this group`;
    if (typeof alert.fingerprint === 'string' && alert.fingerprint && alert.fingerprint !== labelSetFingerprint(labels))
      return `alerts.${i}: fingerprint is not its labels'`;
  }
  return undefined;
}

function labelsOf(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}
