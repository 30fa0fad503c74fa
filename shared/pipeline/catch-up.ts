/**
 * The resolves a stopped `npm start` missed. While it is down, Alertmanager's notifications to it fail;
 * an alert that resolves meanwhile may never reach it resolved (Alertmanager gave up its retries, dropped
 * the resolved alert after `resolve_timeout`, or restarted), and its channels would show it firing for
 * good. At start, every alert last announced firing (`shared/store/firing-records.ts`) is put to the
 * sources of truth the re-fire rule asks (`shared/alert-state`): those that say it is over get the
 * resolved notification now, through the whole pipeline as Alertmanager's resolve would (dedupe, so a
 * resolve Alertmanager still delivers later sends nothing; escalation cancelled; threads updated).
 * A source that cannot tell (`unknown`: unreachable, an alert it never saw) leaves the alert as it is:
 * a resolve is announced only on a source's word.
 */
import type { Alert, WebhookMessage } from '../alertmanager/schema.js';
import type { Verdict } from '../alert-state/types.js';
import type { Logger } from '../core/logger.js';
import type { AlertRecord } from '../store/alert-record.js';
import type { FiringRecords } from '../store/firing-records.js';
import type { GroupResult } from './context.js';

/** `receiver` of a caught-up resolve (no Alertmanager route sent it). */
export const CATCH_UP_RECEIVER = 'llm-alert-pipeline';

export interface CatchUpDeps {
  records: FiringRecords;
  /**
   * What the sources say of each record's alert now, by `fingerprint`; never throws (failures are
   * `unknown`). Unset: no source is configured (`PROMETHEUS_URL`, `ALERTMANAGER_URL`).
   */
  statesOf?: (records: AlertRecord[], signal: AbortSignal) => Promise<Map<string, Verdict>>;
  /** Runs one message through the pipeline as the webhook route does (`processGroup`). */
  deliver: (message: WebhookMessage) => Promise<GroupResult>;
  /** Alerts no source judges (the pipeline's own heartbeat alert, which its check resolves). */
  skip?: (alert: Alert) => boolean;
  /** Budget of the sources' queries, milliseconds. */
  timeoutMs: number;
  logger: Logger;
  /** Clock, epoch milliseconds. */
  now: () => number;
}

/** What a catch-up found and did, by alert. */
export interface CatchUpReport {
  /** Alerts last announced firing. */
  firing: number;
  /** Of those, over by a source's word: announced resolved now. */
  resolved: number;
  /** Still firing by a source's word. */
  stillFiring: number;
  /** No source could tell: left as they are. */
  unknown: number;
  /** Resolves whose delivery failed (the next start tries again; Alertmanager may still send them). */
  failed: number;
}

/**
 * Checks every alert announced firing and announces the resolves that were missed.
 * @returns the report (also logged as `resolves caught up`); `undefined` when no source is configured
 * @throws the store's error when the records cannot be read
 */
export async function catchUpResolves(deps: CatchUpDeps): Promise<CatchUpReport | undefined> {
  if (!deps.statesOf) {
    deps.logger.info('resolves not caught up', { reason: 'neither PROMETHEUS_URL nor ALERTMANAGER_URL is set' });
    return undefined;
  }
  const records = (await deps.records.list(deps.now())).filter((r) => !deps.skip?.(r.alert));
  const verdicts = records.length
    ? await deps.statesOf(records, AbortSignal.timeout(deps.timeoutMs))
    : new Map<string, Verdict>();
  const stateOf = (r: AlertRecord) => verdicts.get(r.fingerprint)?.state ?? 'unknown';
  const over = records.filter((r) => stateOf(r) === 'resolved');
  const report: CatchUpReport = {
    firing: records.length,
    resolved: over.length,
    stillFiring: records.filter((r) => stateOf(r) === 'firing').length,
    unknown: records.filter((r) => stateOf(r) === 'unknown').length,
    failed: 0,
  };
  const endsAt = new Date(deps.now()).toISOString();
  for (const group of byGroupKey(over).values()) {
    const result = await deps.deliver(resolvedMessage(group, endsAt)).catch((error: Error) => {
      deps.logger.error('resolve not caught up', { groupKey: group[0]!.groupKey, error });
      return undefined;
    });
    if (!result?.ok) report.failed += group.length;
  }
  deps.logger.info('resolves caught up', { ...report });
  return report;
}

/** Records by the `groupKey` they were notified under: one resolved message per group, as Alertmanager sends. */
function byGroupKey(records: AlertRecord[]): Map<string, AlertRecord[]> {
  const groups = new Map<string, AlertRecord[]>();
  for (const r of records) groups.set(r.groupKey, [...(groups.get(r.groupKey) ?? []), r]);
  return groups;
}

/** The group's alerts as Alertmanager's resolved notification carries them: each as last notified, `endsAt` now. */
function resolvedMessage(group: AlertRecord[], endsAt: string): WebhookMessage {
  const alerts = group.map((r) => ({ ...r.alert, status: 'resolved' as const, endsAt }));
  return {
    version: '4',
    groupKey: group[0]!.groupKey,
    truncatedAlerts: 0,
    status: 'resolved',
    receiver: CATCH_UP_RECEIVER,
    // Unknown here; renderers fall back to the common labels.
    groupLabels: {},
    commonLabels: common(alerts.map((a) => a.labels)),
    commonAnnotations: common(alerts.map((a) => a.annotations)),
    externalURL: group[0]!.externalURL,
    alerts,
  };
}

/** The pairs every map has, as Alertmanager's `commonLabels` and `commonAnnotations`. */
function common(maps: Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = maps;
  return Object.fromEntries(Object.entries(first ?? {}).filter(([k, v]) => rest.every((m) => m[k] === v)));
}
