/**
 * Silences for many alerts at once ("Acknowledge and silence" on a storm's set): grouped by what they
 * match, not one per alert. Alerts with the same label names that differ in one label only (a storm of
 * one rule over many `instance`s) share one silence: equality matchers on the labels they share and
 * one regex matcher listing the differing label's values, each quoted (Go's `regexp.QuoteMeta`;
 * Alertmanager anchors a matcher's expression), so the silence matches exactly those label sets.
 *
 * Limits: an alert whose labels are a superset of a silence's matchers matches it as well (as a
 * one-alert silence with an equality matcher per label would); `shared/ack/silencer.ts` asks Alertmanager
 * which alerts a grouped silence would match before it is created.
 * @see https://prometheus.io/docs/alerting/latest/alerts_api/ (silences, matchers)
 * @see https://pkg.go.dev/regexp#QuoteMeta
 */
import type { Alert } from './schema.js';
import type { PostableSilence, SilenceMatcher } from './silences.js';

/** Values listed in one regex matcher: 10,000 alerts of one rule become 100 silences, each a few KiB. */
export const MAX_SILENCE_VALUES = 100;
/** Bytes of one regex matcher's value: Alertmanager's API takes far more, its UI and `amtool` show them whole. */
export const MAX_SILENCE_REGEX_BYTES = 8 * 1024;

type Labelled = Pick<Alert, 'labels' | 'fingerprint'>;

/** One silence to create and the alerts it is for. */
export interface SilenceGroup {
  matchers: SilenceMatcher[];
  fingerprints: string[];
}

/** Go's `regexp.QuoteMeta`: every RE2 metacharacter escaped, so the text matches itself only. */
export function quoteMeta(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

const eq = (name: string, value: string): SilenceMatcher => ({ name, value, isRegex: false, isEqual: true });

/**
 * The labels Alertmanager sees: an empty value is an absent label (a matcher on it, or an empty alternative in
 * a regex, would select every alert without the label).
 */
export function presentLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([, value]) => value !== ''));
}

/**
 * Groups `alerts` into as few silences as match exactly their label sets (see the file header).
 * @returns groups in the alerts' order; every alert is in exactly one
 */
export function silenceGroups(alerts: readonly Labelled[]): SilenceGroup[] {
  const byNames = new Map<string, Labelled[]>();
  for (const a of alerts.map((x) => ({ fingerprint: x.fingerprint, labels: presentLabels(x.labels) }))) {
    const key = JSON.stringify(Object.keys(a.labels).sort());
    byNames.set(key, [...(byNames.get(key) ?? []), a]);
  }
  return [...byNames.values()].flatMap(groupSameNames);
}

/** Alerts with the same label names: the label with most distinct values varies, the rest are shared. */
function groupSameNames(alerts: Labelled[]): SilenceGroup[] {
  const names = Object.keys(alerts[0]!.labels).sort();
  const distinct = (name: string) => new Set(alerts.map((a) => a.labels[name])).size;
  const varying = names.reduce<string | undefined>(
    (best, n) => (best && distinct(best) >= distinct(n) ? best : n),
    undefined,
  );
  if (!varying || alerts.length === 1) return alerts.map(singleSilenceGroup);
  const rest = new Map<string, Labelled[]>();
  for (const a of alerts) {
    const key = JSON.stringify(names.filter((n) => n !== varying).map((n) => a.labels[n]));
    rest.set(key, [...(rest.get(key) ?? []), a]);
  }
  return [...rest.values()].flatMap((same) =>
    same.length === 1 ? [singleSilenceGroup(same[0]!)] : regexGroups(same, varying),
  );
}

/** The one-alert silence: an equality matcher per label. */
export function singleSilenceGroup(a: Labelled): SilenceGroup {
  const labels = presentLabels(a.labels);
  return {
    matchers: Object.keys(labels)
      .sort()
      .map((n) => eq(n, labels[n]!)),
    fingerprints: [a.fingerprint],
  };
}

/** Alerts equal but for `varying`: one silence per {@link MAX_SILENCE_VALUES} values (or fewer, by bytes). */
function regexGroups(alerts: Labelled[], varying: string): SilenceGroup[] {
  const shared = Object.keys(alerts[0]!.labels)
    .sort()
    .filter((n) => n !== varying)
    .map((n) => eq(n, alerts[0]!.labels[n] ?? ''));
  const groups: SilenceGroup[] = [];
  let part: Labelled[] = [];
  let bytes = 0;
  const flush = () => {
    if (part.length === 1) groups.push(singleSilenceGroup(part[0]!));
    else if (part.length) {
      const value = part.map((a) => quoteMeta(a.labels[varying] ?? '')).join('|');
      const regex: SilenceMatcher = { name: varying, value, isRegex: true, isEqual: true };
      const matchers = [...shared, regex].sort((x, y) => (x.name < y.name ? -1 : 1));
      groups.push({ matchers, fingerprints: part.map((a) => a.fingerprint) });
    }
    part = [];
    bytes = 0;
  };
  for (const a of alerts) {
    const size = Buffer.byteLength(quoteMeta(a.labels[varying] ?? '')) + 1;
    if (part.length >= MAX_SILENCE_VALUES || (part.length && bytes + size > MAX_SILENCE_REGEX_BYTES)) flush();
    part.push(a);
    bytes += size;
  }
  flush();
  return groups;
}

/**
 * The silence for one group, from `nowMs` for `hours`.
 * @param nowMs epoch milliseconds
 */
export function groupSilence(
  group: SilenceGroup,
  options: { hours: number; by: string; nowMs: number },
): PostableSilence {
  const what =
    group.fingerprints.length === 1 ? `alert ${group.fingerprints[0]}` : `${group.fingerprints.length} alerts`;
  return {
    matchers: group.matchers,
    startsAt: new Date(options.nowMs).toISOString(),
    endsAt: new Date(options.nowMs + options.hours * 3_600_000).toISOString(),
    createdBy: options.by,
    comment: `Acknowledged by ${options.by} via llm-alert-pipeline (${what})`,
  };
}
