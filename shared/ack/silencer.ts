/**
 * "Acknowledge and silence": the Alertmanager silences of one acknowledgement, grouped by what they
 * match (`shared/alertmanager/silence-groups.ts`): a storm of one rule over 400 instances is a handful of
 * silences, not 400. Before a grouped silence is created, Alertmanager is asked which alerts its matchers
 * select now (`GET /api/v2/alerts`); if one of them is not among the alerts acknowledged (it carries
 * more labels, or was not in the set), the group falls back to one silence per alert.
 *
 * Once Alertmanager did not answer, the remaining silences are not tried (each try would wait out its
 * time-out, and a step must finish inside the Lambda's 30 s).
 */
import { AlertmanagerUnanswered, alertmanagerRequest } from '../alertmanager/api.js';
import { sentByGrafana } from '../alertmanager/grafana.js';
import { formatMatcher } from '../alertmanager/matchers/match.js';
import {
  groupSilence,
  presentLabels,
  silenceGroups,
  singleSilenceGroup,
  type SilenceGroup,
} from '../alertmanager/silence-groups.js';
import { createSilence, SilenceError } from '../alertmanager/silences.js';
import type { Endpoint } from '../core/endpoint.js';
import type { Logger } from '../core/logger.js';
import { labelsCut } from '../render/reduce.js';
import type { AlertRecord, AlertStores } from '../store/alert-record.js';

/** A silence made for an alert (its id and end, RFC 3339), or why none was. */
export type SilenceOutcome = { id: string; endsAt: string } | { error: string };

export interface SilencerDeps {
  stores: AlertStores;
  silences: { alertmanager: Endpoint; timeoutMs: number };
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/**
 * Silences `records` for `hours`, as `by`; every record gets its outcome (and its history event).
 * @throws the store's error
 */
export async function silenceRecords(
  records: AlertRecord[],
  request: { hours: number; by: string },
  deps: SilencerDeps,
): Promise<Map<string, SilenceOutcome>> {
  const outcomes = new Map<string, SilenceOutcome>();
  const eligible: AlertRecord[] = [];
  const broader = broaderThanOthers(records);
  for (const r of records) {
    const refused = refusal(r) ?? broader.get(r);
    if (refused) outcomes.set(r.fingerprint, { error: refused });
    else eligible.push(r);
  }
  const byFingerprint = new Map(eligible.map((r) => [r.fingerprint, r]));
  const state: { unreachable?: string } = {};
  const run = { request, deps, state, outcomes };
  for (const group of silenceGroups(eligible.map((r) => r.alert))) {
    for (const g of await exactGroup(group, byFingerprint, deps, state)) await createOne(g, run);
  }
  for (const r of records) await record(r, outcomes.get(r.fingerprint)!, request, deps);
  return outcomes;
}

/** Why an alert is not silenced from here; `undefined` when it can be. */
function refusal(record: AlertRecord): string | undefined {
  // A silence without the rule's name would mute every rule's alerts that share its few labels.
  if (!record.alert.labels.alertname) return 'not silenced: it has no alertname; silence it in Alertmanager';
  if (sentByGrafana(record.alert))
    return 'not silenced: Grafana sent it, so it is silenced in Grafana (its Silence link)';
  // Matchers of cut values would silence nothing while the page said "silenced".
  if (labelsCut(record.alert))
    return 'not silenced: some of its label values were too long or not valid text and were cut; silence it in Alertmanager';
  return undefined;
}

/**
 * The alerts not silenced with the others, each with why: its labels are a part of another acknowledged
 * alert's (`{alertname, cluster}` beside `{alertname, cluster, instance}`), so its silence would also mute
 * that alert and every later one of the rule in that cluster, hours after the set is dealt with. Anyone who
 * can post to Alertmanager's API can slip such an alert into a group; the others' silences stay narrow.
 * Only an alert with fewer labels than another of its rule is compared, and only with those (a storm's
 * alerts all carry the same label names: no comparison at all).
 */
export function broaderThanOthers(records: readonly AlertRecord[]): Map<AlertRecord, string> {
  const byRule = new Map<string, AlertRecord[]>();
  for (const r of records) {
    const rule = byRule.get(r.alert.labels.alertname ?? '');
    if (rule) rule.push(r);
    else byRule.set(r.alert.labels.alertname ?? '', [r]);
  }
  const refused = new Map<AlertRecord, string>();
  // As Alertmanager reads them: an empty value is an absent label.
  const present = new Map(records.map((r) => [r, presentLabels(r.alert.labels)]));
  const size = (r: AlertRecord) => Object.keys(present.get(r)!).length;
  for (const rule of byRule.values()) {
    const most = Math.max(...rule.map(size));
    const larger = (n: number) => rule.filter((r) => size(r) > n);
    for (const r of rule) {
      if (size(r) === most) continue;
      const own = Object.entries(present.get(r)!);
      if (larger(own.length).some((other) => own.every(([name, value]) => present.get(other)![name] === value)))
        refused.set(r, BROADER);
    }
  }
  return refused;
}

const BROADER =
  'not silenced: its labels are a part of another alert’s, so its silence would mute more than it; silence it in Alertmanager';

/**
 * The group as it can be created without silencing alerts that are not its own: Alertmanager is asked
 * which alerts the matchers select now. Others that only carry more labels (a superset) are left out
 * with `name=""` matchers (a missing label is the empty value); any other, or no answer: one silence
 * per alert.
 */
async function exactGroup(
  group: SilenceGroup,
  byFingerprint: Map<string, AlertRecord>,
  deps: SilencerDeps,
  state: { unreachable?: string },
): Promise<SilenceGroup[]> {
  const split = () => group.fingerprints.map((fp) => singleSilenceGroup(byFingerprint.get(fp)!.alert));
  if (group.fingerprints.length === 1) return [group];
  const others = await selectedOthers(group, deps, state);
  if (!others) return split();
  if (!others.length) return [group];
  const names = new Set(group.matchers.map((m) => m.name));
  const extra = new Set(others.flatMap((labels) => Object.keys(labels).filter((n) => !names.has(n))));
  if (others.some((labels) => !Object.keys(labels).some((n) => extra.has(n)))) return split();
  const absent = [...extra].map((name) => ({ name, value: '', isRegex: false, isEqual: true as const }));
  return [{ ...group, matchers: [...group.matchers, ...absent] }];
}

/** The labels of the alerts Alertmanager lists for the group's matchers that are not the group's; `undefined`: unknown. */
async function selectedOthers(
  group: SilenceGroup,
  deps: SilencerDeps,
  state: { unreachable?: string },
): Promise<Record<string, string>[] | undefined> {
  if (state.unreachable) return undefined;
  const query = new URLSearchParams(
    group.matchers.map((m): [string, string] => [
      'filter',
      formatMatcher({ name: m.name, type: m.isRegex ? '=~' : '=', value: m.value }),
    ]),
  );
  try {
    const { status, text } = await alertmanagerRequest(deps.silences.alertmanager, `/api/v2/alerts?${query}`, {
      method: 'GET',
      signal: AbortSignal.timeout(deps.silences.timeoutMs),
    });
    const listed: unknown = status === 200 ? JSON.parse(text) : undefined;
    if (!Array.isArray(listed)) return undefined;
    const mine = new Set(group.fingerprints);
    return (listed as { fingerprint?: string; labels?: Record<string, string> }[])
      .filter((a) => !a.fingerprint || !mine.has(a.fingerprint))
      .map((a) => a.labels ?? {});
  } catch (err) {
    if (err instanceof AlertmanagerUnanswered) state.unreachable = err.message;
    else if (!(err instanceof SyntaxError)) throw err;
    return undefined;
  }
}

/**
 * Creates one silence for `group` and notes its outcome for each of its alerts. Once Alertmanager did not
 * answer (`state.unreachable`), the remaining groups are not tried.
 */
async function createOne(
  group: SilenceGroup,
  {
    request,
    deps,
    state,
    outcomes,
  }: {
    request: { hours: number; by: string };
    deps: SilencerDeps;
    state: { unreachable?: string };
    outcomes: Map<string, SilenceOutcome>;
  },
): Promise<void> {
  try {
    if (state.unreachable) throw new SilenceError(`not tried: ${state.unreachable}`);
    const silence = groupSilence(group, { ...request, nowMs: deps.now() });
    const id = await createSilence(deps.silences.alertmanager, silence, deps.silences.timeoutMs);
    deps.logger.info('alerts silenced', { silenceId: id, alerts: group.fingerprints.length, endsAt: silence.endsAt });
    for (const fp of group.fingerprints) outcomes.set(fp, { id, endsAt: silence.endsAt });
  } catch (err) {
    if (!(err instanceof SilenceError)) throw err;
    if (err.cause instanceof AlertmanagerUnanswered) state.unreachable ??= err.message;
    deps.logger.error('silence failed', { alerts: group.fingerprints.length, error: err.message });
    for (const fp of group.fingerprints) outcomes.set(fp, { error: err.message });
  }
}

/** Stores the outcome on the acknowledgement and in the history. */
async function record(
  r: AlertRecord,
  outcome: SilenceOutcome,
  request: { by: string },
  deps: SilencerDeps,
): Promise<void> {
  if ('id' in outcome) {
    await deps.stores.acknowledgements.setSilence(r.fingerprint, r.startsAt, outcome, deps.now());
    await deps.stores.history.add(
      r.fingerprint,
      { type: 'silenced', silenceId: outcome.id, endsAt: outcome.endsAt, by: request.by, startsAt: r.startsAt },
      deps.now(),
    );
  } else {
    await deps.stores.history.add(
      r.fingerprint,
      { type: 'silence failed', error: outcome.error, startsAt: r.startsAt },
      deps.now(),
    );
  }
}
