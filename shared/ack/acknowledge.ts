/**
 * What the acknowledgement form's POST does, in order: acknowledge each alert the link names (once:
 * a second ack reports the first), cancel their escalation, optionally silence them in Alertmanager,
 * then send one short "acknowledged by X" follow-up to each channel that carried them.
 */
import pLimit from 'p-limit';
import type { Channel } from '../channels/channel.js';
import { deliver } from '../channels/deliver.js';
import type { FollowUps } from './follow-ups.js';
import type { Logger } from '../core/logger.js';
import { linkCover } from './links.js';
import { isoTime } from '../store/alert-record-items.js';
import { noticeFromRecords } from '../escalation/notices.js';
import type { EscalationScheduler } from '../escalation/scheduler.js';
import { silenceRecords } from './silencer.js';
import type { Endpoint } from '../core/endpoint.js';
import type { AckClaims } from './token.js';
import type { AckOutcome, AlertStores, AlertRecord } from '../store/alert-record.js';

/**
 * Store calls in flight at once for one link. A storm digest's link names up to 10,000 alerts (an
 * alert set), each 6 requests (acknowledge, history, escalation cancel, follow-up history; counted on
 * dynalite for 1,000 alerts: 6,002). At ~8 ms a round trip that is ~6 s at 8 in flight (estimated, not
 * measured in AWS), a quarter of it at 32; the Lambda has 30 s.
 */
const CONCURRENCY = 32;

export interface AcknowledgeDeps {
  stores: AlertStores;
  /** Every channel by name, escalation targets included: follow-ups go to those that carried the alert. */
  channels: Channel[];
  /** Set when `ALERTMANAGER_URL` is (with its credentials): the page then offers "acknowledge and silence". */
  silences?: { alertmanager: Endpoint; timeoutMs: number };
  scheduler?: EscalationScheduler;
  delivery: { timeoutMs: number; retries: number; budgetMs?: number };
  /** Keeps follow-ups a platform did not take in time (a 429) and tries them again; unset: a failure is final. */
  followUps?: FollowUps;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
  /** Waits between delivery attempts, milliseconds (a test's clock); default real time. */
  sleep?(ms: number): Promise<void>;
}

export interface AckRequest {
  /** The typed name (trimmed, 1–64 characters) or `anonymous`. */
  by: string;
  /** Also silence for this many hours. */
  silenceHours?: number;
}

/** Per alert: what happened, plus the silence made or why not. */
export type AlertAckResult = {
  fingerprint: string;
  /** The silence created with it: its id and end (RFC 3339), or why none was. */
  silence?: { id: string; endsAt?: string } | { error: string };
} & AckOutcome;

export interface AckResult {
  alerts: AlertAckResult[];
  /** Follow-up delivery per channel: true when delivered. */
  followUps: Record<string, boolean>;
}

/** How the follow-ups are sent: awaited (the page shows them), or handed to `defer` (Slack wants its answer within 3 s). */
export interface AckOptions {
  /** Runs the follow-ups after answering; `followUps` is then `{}` (not known yet). Unset: awaited. */
  defer?: (task: () => Promise<void>) => void;
  /** The acknowledgement's time, RFC 3339 (an alert set's job: the time of the decision). Default: now. */
  at?: string;
  /**
   * Leaves out the channels that count one event per alert against a rate limit (`Channel.eventsPerMinute`,
   * PagerDuty): an alert set's job sends theirs paced (`set-job.ts`).
   */
  pacedLater?: boolean;
}

/**
 * @param claims a verified token's claims
 * @throws the store's error when DynamoDB is unreachable (nothing half-done is reported as done)
 */
export async function acknowledge(
  claims: AckClaims,
  request: AckRequest,
  deps: AcknowledgeDeps,
  options: AckOptions = {},
): Promise<AckResult> {
  const log = deps.logger.child({ group: claims.group, channel: claims.channel });
  const limit = pLimit(CONCURRENCY);
  const one: AlertAck = { claims, request, at: options.at ?? isoTime(deps.now()), deps, log };
  const acknowledged = await Promise.all(claims.fingerprints.map((f) => limit(() => acknowledgeAlert(f, one))));
  const results = await withSilences(acknowledged, request, { ...deps, logger: log });
  const acked = results.flatMap((r) => (r.outcome === 'acknowledged' ? [withSilence(r.record, r.silence)] : []));
  const channels = options.pacedLater ? deps.channels.filter((c) => !c.eventsPerMinute) : deps.channels;
  const followUpDeps = { ...deps, channels };
  if (acked.length && options.defer) {
    options.defer(async () => void (await sendFollowUps(acked, followUpDeps, log)));
    return { alerts: results, followUps: {} };
  }
  const followUps = acked.length ? await sendFollowUps(acked, followUpDeps, log) : {};
  return { alerts: results, followUps };
}

/** What acknowledging each alert of one request shares: the link, the request, its time (RFC 3339). */
interface AlertAck {
  claims: AckClaims;
  request: AckRequest;
  at: string;
  deps: AcknowledgeDeps;
  log: Logger;
}

/**
 * One alert of the link: acknowledged in the store (once), and when this request did it, its history
 * entry and its escalation cancelled.
 */
async function acknowledgeAlert(
  fingerprint: string,
  { claims, request, at, deps, log }: AlertAck,
): Promise<AlertAckResult> {
  const ack = { by: request.by, at, channel: claims.channel };
  const outcome = await deps.stores.acknowledgements.acknowledge(fingerprint, ack, linkCover(claims), deps.now());
  log.info('acknowledgement', { fingerprint, outcome: outcome.outcome, by: request.by });
  if (outcome.outcome !== 'acknowledged') return { fingerprint, ...outcome };
  const { startsAt } = outcome.record;
  await deps.stores.history.add(
    fingerprint,
    { type: 'acknowledged', by: request.by, channel: claims.channel, startsAt },
    deps.now(),
  );
  await cancelEscalation(outcome.record, deps, log);
  return { fingerprint, ...outcome };
}

/** "Acknowledge and silence": the silences of the alerts just acknowledged, grouped (`silencer.ts`). */
async function withSilences(
  results: AlertAckResult[],
  request: AckRequest,
  deps: AcknowledgeDeps,
): Promise<AlertAckResult[]> {
  if (!request.silenceHours || !deps.silences) return results;
  const records = results.flatMap((r) => (r.outcome === 'acknowledged' ? [r.record] : []));
  if (!records.length) return results;
  const silences = await silenceRecords(
    records,
    { hours: request.silenceHours, by: request.by },
    { ...deps, silences: deps.silences },
  );
  return results.map((r) => {
    const silence = silences.get(r.fingerprint);
    return silence ? { ...r, silence } : r;
  });
}

function withSilence(record: AlertRecord, silence: AlertAckResult['silence']): AlertRecord {
  if (!silence || !('id' in silence) || !record.acknowledgement) return record;
  return {
    ...record,
    acknowledgement: {
      ...record.acknowledgement,
      silenceId: silence.id,
      ...(silence.endsAt && { silenceEndsAt: silence.endsAt }),
    },
  };
}

async function cancelEscalation(record: AlertRecord, deps: AcknowledgeDeps, log: Logger): Promise<void> {
  if (!(await deps.stores.escalations.cancel(record.fingerprint, record.startsAt, 'acknowledged', deps.now()))) return;
  await deps.stores.history.add(
    record.fingerprint,
    { type: 'escalation cancelled', reason: 'acknowledged', startsAt: record.startsAt },
    deps.now(),
  );
  // The check re-reads the state anyway; a failed cancel only leaves a schedule that will skip.
  await deps.scheduler?.cancel({ fingerprint: record.fingerprint, startsAt: record.startsAt }).catch((err: Error) => {
    log.warn('escalation unschedule failed', { fingerprint: record.fingerprint, error: err.message });
  });
}

/**
 * One follow-up per channel, naming every alert this request acknowledged that the channel carried. One
 * that fails for a reason that passes (a 429) is kept and tried again (`deps.followUps`).
 */
async function sendFollowUps(
  records: AlertRecord[],
  deps: AcknowledgeDeps,
  log: Logger,
): Promise<Record<string, boolean>> {
  const byChannel = new Map<string, AlertRecord[]>();
  for (const record of records) {
    for (const name of record.channels) byChannel.set(name, [...(byChannel.get(name) ?? []), record]);
  }
  const outcomes: Record<string, boolean> = {};
  const retrying = new Set<string>();
  await Promise.all(
    [...byChannel].map(async ([name, mine]) => {
      const channel = deps.channels.find((c) => c.name === name);
      if (!channel) return;
      const outcome = await followUpTo(channel, mine, deps, log);
      outcomes[name] = outcome === 'delivered';
      if (outcome === 'retrying') retrying.add(name);
    }),
  );
  for (const record of records) {
    const carried = record.channels.filter((c) => c in outcomes);
    const kept = carried.filter((c) => retrying.has(c));
    await deps.stores.history.add(
      record.fingerprint,
      {
        type: 'follow-up',
        channels: carried.filter((c) => outcomes[c]),
        failed: carried.filter((c) => !outcomes[c] && !retrying.has(c)),
        ...(kept.length && { retrying: kept }),
        startsAt: record.startsAt,
      },
      deps.now(),
    );
  }
  return outcomes;
}

/** The first try of one channel's follow-up; on a failure that passes it is kept for a retry. */
async function followUpTo(
  channel: Channel,
  records: AlertRecord[],
  deps: AcknowledgeDeps,
  log: Logger,
): Promise<'delivered' | 'retrying' | 'failed'> {
  const firstAtMs = deps.now();
  const clock = deps.sleep && { now: deps.now, sleep: deps.sleep };
  try {
    const options = { ...deps.delivery, logger: log, ...(clock && { clock }) };
    await deliver(channel, noticeFromRecords('acknowledged', records), options);
    deps.followUps?.count(channel.name, 'delivered');
    return 'delivered';
  } catch (err) {
    const request = { kind: 'acknowledged' as const, channel: channel.name, alerts: records.map(occurrenceOf) };
    if (await deps.followUps?.keep(request, err, firstAtMs)) return 'retrying';
    log.error('follow-up failed', { channel: channel.name, error: (err as Error).message });
    deps.followUps?.count(channel.name, 'given_up');
    return 'failed';
  }
}

const occurrenceOf = (r: AlertRecord) => ({ fingerprint: r.fingerprint, startsAt: r.startsAt });
