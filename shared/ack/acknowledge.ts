/**
 * What the acknowledgement form's POST does, in order: acknowledge each alert the link names (once:
 * a second ack reports the first), cancel their escalation, optionally silence them in Alertmanager,
 * then send one short "acknowledged by X" follow-up to each channel that carried them.
 */
import pLimit from 'p-limit';
import type { Channel } from '../channels/channel.js';
import { deliver } from '../channels/deliver.js';
import { labelsCut } from '../render/reduce.js';
import type { Logger } from '../core/logger.js';
import { latestCoveredStart } from './links.js';
import { isoTime } from '../store/alert-record-items.js';
import { noticeFromRecords } from '../escalation/notices.js';
import type { EscalationScheduler } from '../escalation/scheduler.js';
import { createSilence, SilenceError, silenceFor } from '../alertmanager/silences.js';
import type { AckClaims } from './token.js';
import type { AckOutcome, AlertRecordStore, AlertRecord } from '../store/alert-record.js';

/**
 * Store calls in flight at once for one link. A storm digest's link names up to 10,000 alerts (an
 * alert set), each 6 requests (acknowledge, history, escalation cancel, follow-up history; counted on
 * dynalite for 1,000 alerts: 6,002). At ~8 ms a round trip that is ~6 s at 8 in flight (estimated, not
 * measured in AWS), a quarter of it at 32; the Lambda has 30 s.
 */
const CONCURRENCY = 32;

export interface AcknowledgeDeps {
  store: AlertRecordStore;
  /** Every channel by name, escalation targets included: follow-ups go to those that carried the alert. */
  channels: Channel[];
  /** Set when `ALERTMANAGER_URL` is: the page then offers "acknowledge and silence". */
  silences?: { alertmanagerUrl: string; timeoutMs: number };
  scheduler?: EscalationScheduler;
  delivery: { timeoutMs: number; retries: number; budgetMs?: number };
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

export interface AckRequest {
  /** The typed name (trimmed, 1–64 characters) or `anonymous`. */
  by: string;
  /** Also silence for this many hours. */
  silenceHours?: number;
}

/** Per alert: what happened, plus the silence made or why not. */
export type AlertAckResult = { fingerprint: string; silence?: { id: string } | { error: string } } & AckOutcome;

export interface AckResult {
  alerts: AlertAckResult[];
  /** Follow-up delivery per channel: true when delivered. */
  followUps: Record<string, boolean>;
}

/** How the follow-ups are sent: awaited (the page shows them), or handed to `defer` (Slack wants its answer within 3 s). */
export interface AckOptions {
  /** Runs the follow-ups after answering; `followUps` is then `{}` (not known yet). Unset: awaited. */
  defer?: (task: () => Promise<void>) => void;
}

/**
 * @param claims a verified token's claims
 * @throws the store's error when DynamoDB is unreachable (nothing half-done is reported as done)
 */
export async function acknowledge(claims: AckClaims, request: AckRequest, deps: AcknowledgeDeps, options: AckOptions = {}): Promise<AckResult> {
  const log = deps.logger.child({ group: claims.group, channel: claims.channel });
  const limit = pLimit(CONCURRENCY);
  const at = isoTime(deps.now());
  const silencer = request.silenceHours && deps.silences ? new Silencer(deps, request, log) : undefined;
  const results: AlertAckResult[] = await Promise.all(claims.fingerprints.map((fingerprint) => limit(async () => {
    const outcome = await deps.store.acknowledge(fingerprint, { by: request.by, at, channel: claims.channel }, latestCoveredStart(claims.issuedAt), deps.now());
    log.info('acknowledgement', { fingerprint, outcome: outcome.outcome, by: request.by });
    if (outcome.outcome !== 'acknowledged') return { fingerprint, ...outcome };
    const startsAt = outcome.record.startsAt;
    await deps.store.addHistory(fingerprint, { type: 'acknowledged', by: request.by, channel: claims.channel, startsAt }, deps.now());
    await cancelEscalation(outcome.record, deps, log);
    const silence = silencer ? await silencer.silence(outcome.record) : undefined;
    return { fingerprint, ...outcome, ...(silence && { silence }) };
  })));
  const acked = results.flatMap((r) => (r.outcome === 'acknowledged' ? [withSilence(r.record, r.silence)] : []));
  if (acked.length && options.defer) {
    options.defer(async () => void (await sendFollowUps(acked, deps, log)));
    return { alerts: results, followUps: {} };
  }
  const followUps = acked.length ? await sendFollowUps(acked, deps, log) : {};
  return { alerts: results, followUps };
}

function withSilence(record: AlertRecord, silence: AlertAckResult['silence']): AlertRecord {
  if (!silence || !('id' in silence) || !record.acknowledgement) return record;
  return { ...record, acknowledgement: { ...record.acknowledgement, silenceId: silence.id } };
}

async function cancelEscalation(record: AlertRecord, deps: AcknowledgeDeps, log: Logger): Promise<void> {
  if (!(await deps.store.cancelEscalation(record.fingerprint, record.startsAt, 'acknowledged', deps.now()))) return;
  await deps.store.addHistory(record.fingerprint, { type: 'escalation cancelled', reason: 'acknowledged', startsAt: record.startsAt }, deps.now());
  // The check re-reads the state anyway; a failed cancel only leaves a schedule that will skip.
  await deps.scheduler?.cancel({ fingerprint: record.fingerprint, startsAt: record.startsAt }).catch((err: Error) => {
    log.warn('escalation unschedule failed', { fingerprint: record.fingerprint, error: err.message });
  });
}

/**
 * Creates the silences of one request. Once Alertmanager did not answer, the remaining alerts are not
 * tried (each try would wait out its time-out, and the request must finish inside the Lambda's 30 s).
 */
class Silencer {
  #unreachable?: string;
  constructor(private readonly deps: AcknowledgeDeps, private readonly request: AckRequest, private readonly log: Logger) {}

  async silence(record: AlertRecord): Promise<{ id: string } | { error: string }> {
    const { store, now } = this.deps;
    const { alertmanagerUrl, timeoutMs } = this.deps.silences!;
    const silence = silenceFor(record.alert, { hours: this.request.silenceHours!, by: this.request.by, nowMs: now() });
    try {
      if (this.#unreachable) throw new SilenceError(`not tried: ${this.#unreachable}`);
      // Matchers of cut values would silence nothing while the page said "silenced".
      if (labelsCut(record.alert)) throw new SilenceError('not silenced: some of its label values were too long or not valid text and were cut; silence it in Alertmanager');
      const id = await createSilence(alertmanagerUrl, silence, timeoutMs);
      await store.setSilence(record.fingerprint, record.startsAt, id, now());
      await store.addHistory(record.fingerprint, { type: 'silenced', silenceId: id, endsAt: silence.endsAt, by: this.request.by, startsAt: record.startsAt }, now());
      this.log.info('alert silenced', { fingerprint: record.fingerprint, silenceId: id, endsAt: silence.endsAt });
      return { id };
    } catch (err) {
      if (!(err instanceof SilenceError)) throw err;
      if (err.message.startsWith('Alertmanager did not answer')) this.#unreachable ??= err.message;
      this.log.error('silence failed', { fingerprint: record.fingerprint, error: err.message });
      await store.addHistory(record.fingerprint, { type: 'silence failed', error: err.message, startsAt: record.startsAt }, now());
      return { error: err.message };
    }
  }
}

/** One follow-up per channel, naming every alert this request acknowledged that the channel carried. */
async function sendFollowUps(records: AlertRecord[], deps: AcknowledgeDeps, log: Logger): Promise<Record<string, boolean>> {
  const byChannel = new Map<string, AlertRecord[]>();
  for (const record of records) {
    for (const name of record.channels) byChannel.set(name, [...(byChannel.get(name) ?? []), record]);
  }
  const outcomes: Record<string, boolean> = {};
  await Promise.all([...byChannel].map(async ([name, mine]) => {
    const channel = deps.channels.find((c) => c.name === name);
    if (!channel) return;
    try {
      await deliver(channel, noticeFromRecords('acknowledged', mine), { ...deps.delivery, logger: log });
      outcomes[name] = true;
    } catch (err) {
      log.error('follow-up failed', { channel: name, error: (err as Error).message });
      outcomes[name] = false;
    }
  }));
  for (const record of records) {
    const carried = record.channels.filter((c) => c in outcomes);
    await deps.store.addHistory(record.fingerprint, {
      type: 'follow-up',
      channels: carried.filter((c) => outcomes[c]),
      failed: carried.filter((c) => !outcomes[c]),
      startsAt: record.startsAt,
    }, deps.now());
  }
  return outcomes;
}
