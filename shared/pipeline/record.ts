/**
 * The record stage: what the service remembers of each alert it was to send (`shared/store/alert-record.ts`):
 * its record (the occurrence, the channels that carried it, its enrichment and flap run) and a `notified`
 * (or `not delivered`) history event, then escalation scheduled for a new critical occurrence and cancelled
 * by a resolve (`AckTracker.escalations`). An alert every channel of its claim accepted is recorded during
 * fan-out, by the ledger ({@link recordDelivered}): its record's write carries the delivery mark and is the
 * alert's only write after delivery. The others are recorded after the ledger settled ({@link record}),
 * delivered or not: an undelivered critical alert still escalates (the target is the way out of a platform
 * outage), and an undelivered resolve still cancels its escalation.
 *
 * It never fails the group: the alert matters more than its bookkeeping, so store errors are logged.
 */
import pLimit from 'p-limit';
import type { Alert } from '../alertmanager/schema.js';
import type { NotifiedAlert, RecordWrite } from '../store/alert-record.js';
import type { Claim } from '../store/dedupe.js';
import type { ChannelOutcome, ClaimedAlert, GroupContext } from './context.js';

/** Store calls in flight at once while recording a group (a storm can bring thousands of alerts). */
const CONCURRENCY = 64;

/**
 * Writes the record of an alert that every channel of its claim accepted, with the delivery mark
 * `claim.event.key` (the dedupe ledger reads it as delivered). Once per event: the record's history
 * event lists `channels`.
 * @returns whether the mark stands: written, or the record holds a later occurrence (this one is over);
 *   false for a late firing of a record already resolved (the ledger then writes the head apart)
 * @throws the store's error (the ledger then writes the head apart)
 */
export async function recordDelivered(
  group: GroupContext,
  { alert, claim, channels }: { alert: Alert; claim: Claim; channels: string[] },
): Promise<boolean> {
  const notified = notifiedOf(group, { alert, claim, channels }, claim.event.key);
  const written = await group.deps.alerts.records.recordNotified(notified, group.deps.now(), group.recorded.history);
  group.recorded.written.set(claim.event.key, written);
  return written === undefined || alert.status === 'resolved' || written.record.status === 'firing';
}

/** Records the alerts not recorded during fan-out, escalates, and writes the group's history events. Never throws. */
export async function record(group: GroupContext): Promise<void> {
  const { deps, log, message } = group;
  const limit = pLimit(CONCURRENCY);
  const escalations = deps.ack?.escalations(message.groupKey);
  const delivered = channelsWhere(group, (o) => o.status === 'delivered');
  const unknown = channelsWhere(group, (o) => o.status === 'failed' && o.mayHaveBeenDelivered === true);
  await Promise.all(
    group.toSend.map((c) =>
      limit(async () => {
        try {
          const written = await recordOne(group, c, { delivered, unknown });
          if (written && escalations) await escalations.after(c.alert, written.record);
        } catch (err) {
          log.error('ack state write failed', { fingerprint: c.alert.fingerprint, error: (err as Error).message });
        }
      }),
    ),
  );
  await deps.alerts.history.flush(group.recorded.history).catch((err: Error) => {
    log.error('ack history write failed', { groupKey: message.groupKey, error: err.message });
  });
  escalations?.done();
}

/** The alert's record write, unless the ledger made it during fan-out; `undefined`: ignored (an older occurrence). */
async function recordOne(
  group: GroupContext,
  c: ClaimedAlert,
  outcomes: { delivered: ReadonlySet<string>; unknown: ReadonlySet<string> },
): Promise<RecordWrite | undefined> {
  const key = c.claim.event.key;
  if (group.recorded.written.has(key)) return group.recorded.written.get(key);
  const channels = c.claim.pending.filter((name) => outcomes.delivered.has(name));
  const unknown = c.claim.pending.filter((name) => outcomes.unknown.has(name));
  const notified = {
    ...notifiedOf(group, { alert: c.alert, claim: c.claim, channels }),
    ...(unknown.length && { mayHaveBeenDelivered: unknown }),
  };
  return group.deps.alerts.records.recordNotified(notified, group.deps.now(), group.recorded.history);
}

/** The channels whose outcome in this group's fan-out passes `test`. */
function channelsWhere(group: GroupContext, test: (outcome: ChannelOutcome) => boolean): Set<string> {
  return new Set(group.outcomes.flatMap((o) => (o.outcome && test(o.outcome) ? [o.channel] : [])));
}

/** What the store records of one alert; `deliveredEvent`: the delivery mark. */
function notifiedOf(
  group: GroupContext,
  { alert, claim, channels }: { alert: Alert; claim: Claim; channels: string[] },
  deliveredEvent?: string,
): NotifiedAlert {
  const generation = claim.event.generation;
  const flapRun = group.runs.get(alert.fingerprint);
  return {
    alert,
    enrichment: group.enrichments.get(alert.fingerprint),
    groupKey: group.message.groupKey,
    externalURL: group.message.externalURL,
    channels,
    ...(generation && { generation }),
    ...(deliveredEvent && { deliveredEvent }),
    ...(flapRun && { flapRun }),
  };
}
