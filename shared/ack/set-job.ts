/**
 * "Acknowledge all N" of a storm digest's alert set, as a job: the click records the decision (one
 * conditional write, `shared/store/ack-set-jobs.ts`), hands the job to `dispatch` and answers; the set is
 * then acknowledged in steps, each bounded so that one fits a Lambda invocation:
 *
 * 1. {@link ACK_STEP_ALERTS} alerts at a time: acknowledged, escalations cancelled, silenced (grouped by
 *    what they match), and one follow-up per channel — except channels that count one event per alert
 *    against a rate limit (PagerDuty), which are left to step 2;
 * 2. paced events: the distinct PagerDuty `dedup_key`s of the alerts this job acknowledged
 *    (`Channel.ackEventKeys`: a storm's alerts share its one key, sent once for the whole job), at most
 *    {@link PACED_STEP_EVENTS} per step and channel, at half the channel's documented rate, so the next real
 *    alert still gets through. The pacing counts the events sent, not the alerts.
 *
 * Each step moves a cursor with a conditional write; a repeated step (Lambda's retry of an asynchronous
 * invocation, a resumed job) re-acknowledges nothing: an alert is acknowledged once, by whichever step
 * got there first, and only the winner sends its follow-up.
 */
import type { AlertSetStore } from '../store/alert-set.js';
import type { AckSetJob, AckSetJobStore } from '../store/ack-set-jobs.js';
import type { AlertRecord } from '../store/alert-record.js';
import type { Channel } from '../channels/channel.js';
import { deliver } from '../channels/deliver.js';
import { pagerDutyAckKey, pagerDutyAckKeys } from '../channels/pagerduty/ack-keys.js';
import { noticeFromRecords } from '../escalation/notices.js';
import { isoTime } from '../store/alert-record-items.js';
import { acknowledge, type AckRequest, type AcknowledgeDeps } from './acknowledge.js';
import type { AckClaims } from './token.js';

/**
 * Alerts acknowledged per step. Each costs ~6 DynamoDB requests at 32 in flight (`acknowledge.ts`):
 * 3,000 alerts took 19 s in one request, so 1,000 take ~6–7 s, leaving most of the Lambda's 30 s for
 * the follow-ups and their retries; the documented cap of 10,000 is 10 steps.
 */
export const ACK_STEP_ALERTS = 1000;
/** Paced events per step and channel: at one event per {@link pacedIntervalMs} (1 s for PagerDuty), ~20 s. */
export const PACED_STEP_EVENTS = 20;
/** Records read per paced step to find its events (a storm's alerts share one `dedup_key`). */
const PACED_SCAN_ALERTS = 1000;
/** A job that has not moved for this long (its invocation failed for good) is resumed by a second click, ms. */
export const RESUME_AFTER_MS = 120_000;
/** How long a job's record is kept after its link expires, ms (the page still says who acknowledged). */
const JOB_KEPT_MS = 24 * 3_600_000;

/** Hands a job's next step to whatever runs it after the answer: an asynchronous invocation, a timer. */
export type AckSetDispatch = (jobId: string) => Promise<void>;

export interface AckSetDeps extends AcknowledgeDeps {
  sets?: AlertSetStore;
  jobs: AckSetJobStore;
  dispatch: AckSetDispatch;
  /** Waits, milliseconds (a timer; injected in tests). */
  sleep(ms: number): Promise<void>;
  /** Alerts acknowledged per step; default {@link ACK_STEP_ALERTS}. */
  stepAlerts?: number;
}

/** What a click did: started the job, or found the decision someone made first. */
export interface SetAckStart {
  job: AckSetJob;
  /** false: the set's acknowledgement was decided before (this click changed nothing, or resumed it). */
  started: boolean;
}

/** Time between two paced events of one channel: half the channel's documented rate, ms. */
export function pacedIntervalMs(eventsPerMinute: number): number {
  return Math.ceil(60_000 / (eventsPerMinute / 2));
}

/**
 * Records the decision to acknowledge the set `claims.set` names and dispatches its first step. The
 * work before it returns is one conditional `PutItem` (plus one `GetItem` when the decision was made
 * before) and the dispatch, whatever the set's size.
 * @throws the store's or the dispatch's error (a failed dispatch: a click after {@link RESUME_AFTER_MS} resumes it)
 */
export async function startSetAcknowledgement(
  claims: AckClaims & { set: NonNullable<AckClaims['set']> },
  request: AckRequest,
  deps: AckSetDeps,
): Promise<SetAckStart> {
  const now = deps.now();
  const job: AckSetJob = {
    id: claims.set.id,
    link: {
      group: claims.group,
      channel: claims.channel,
      issuedAt: claims.issuedAt,
      ...(claims.startsAt !== undefined && { startsAt: claims.startsAt }),
      named: claims.fingerprints,
    },
    by: request.by,
    at: isoTime(now),
    ...(request.silenceHours && { silenceHours: request.silenceHours }),
    total: claims.set.alerts,
    acked: 0,
    paced: 0,
    pacedNotBeforeMs: 0,
    updatedAtMs: now,
  };
  const first = await deps.jobs.start(job, claims.expiresAt * 1000 + JOB_KEPT_MS);
  if (!first) {
    await deps.dispatch(job.id);
    return { job, started: true };
  }
  const stalled = !finished(first) && now - first.updatedAtMs > RESUME_AFTER_MS;
  if (stalled) {
    deps.logger.warn('alert set acknowledgement resumed', { set: first.id, acked: first.acked, paced: first.paced });
    await deps.dispatch(first.id);
  }
  return { job: first, started: false };
}

const finished = (job: AckSetJob) => job.acked >= job.total && job.paced >= job.total;

/**
 * Runs one step of the job (see the file header).
 * @returns `more` when another step is due (dispatch it), `done` when the job is over or another step moved it
 * @throws the store's error (the step can be run again)
 */
export async function runSetStep(jobId: string, deps: AckSetDeps): Promise<'more' | 'done'> {
  const job = await deps.jobs.get(jobId);
  if (!job) {
    deps.logger.warn('alert set acknowledgement not found', { set: jobId });
    return 'done';
  }
  const set = (await deps.sets?.get(job.id, deps.now())) ?? gone(job, deps);
  const total = Math.min(job.total, set.fingerprints.length);
  if (job.acked < total) {
    const slice = set.fingerprints.slice(job.acked, job.acked + (deps.stepAlerts ?? ACK_STEP_ALERTS));
    const result = await acknowledge(claimsOf(job, slice), { by: job.by, silenceHours: job.silenceHours }, deps, {
      at: job.at,
      pacedLater: true,
    });
    const moved = await deps.jobs.advance(
      job.id,
      'acked',
      { from: job.acked, to: job.acked + slice.length },
      deps.now(),
    );
    deps.logger.info('alert set step', {
      set: job.id,
      from: job.acked,
      alerts: slice.length,
      acknowledged: result.alerts.filter((a) => a.outcome === 'acknowledged').length,
      total,
    });
    return moved ? 'more' : 'done';
  }
  if (job.paced < total) return pacedStep(job, set.fingerprints.slice(0, total), deps);
  return 'done';
}

/** The set could not be read (its write failed, or it expired): the link's own first alerts remain, as on the page. */
function gone(job: AckSetJob, deps: AckSetDeps): { fingerprints: string[] } {
  deps.logger.warn('alert set not found', { set: job.id, named: job.link.named.length, alerts: job.total });
  return { fingerprints: job.link.named };
}

function claimsOf(job: AckSetJob, fingerprints: string[]): AckClaims {
  const { named: _named, ...link } = job.link;
  return { ...link, fingerprints, expiresAt: Number.MAX_SAFE_INTEGER };
}

/** Step 2: the next paced events, after waiting for the time the previous step left. */
async function pacedStep(job: AckSetJob, fingerprints: string[], deps: AckSetDeps): Promise<'more' | 'done'> {
  const paced = deps.channels.filter((c) => c.eventsPerMinute);
  const wait = Math.min(job.pacedNotBeforeMs - deps.now(), PACED_STEP_EVENTS * 60_000);
  if (paced.length && wait > 0) await deps.sleep(wait);
  const scan = fingerprints.slice(job.paced, job.paced + PACED_SCAN_ALERTS);
  const mine = paced.length ? await acknowledgedByJob(job, scan, deps) : scan.map(() => undefined);
  const plan = await planPaced(paced, mine, new Set(job.pacedKeys));
  // The pacing counts the events sent, not the alerts they stand for.
  let slowest = 0;
  for (const channel of paced) {
    const events = plan.events.get(channel.name)!;
    if (!events.size) continue;
    await sendPaced(channel, [...events.values()], deps);
    slowest = Math.max(slowest, events.size * pacedIntervalMs(channel.eventsPerMinute!));
  }
  const move = { from: job.paced, to: job.paced + plan.end, pacedNotBeforeMs: deps.now() + slowest };
  const moved = await deps.jobs.advance(job.id, 'paced', { ...move, sentKeys: plan.shared }, deps.now());
  return moved && job.paced + plan.end < fingerprints.length ? 'more' : 'done';
}

/** The records of `scan`, in its order, that this job acknowledged: one acknowledged before had its follow-up then. */
async function acknowledgedByJob(
  job: AckSetJob,
  scan: string[],
  deps: AckSetDeps,
): Promise<(AlertRecord | undefined)[]> {
  const found = await deps.stores.records.getMany(scan, deps.now());
  return scan.map((fp) => {
    const r = found.get(fp);
    return r?.acknowledgement?.by === job.by && r.acknowledgement.at === job.at ? r : undefined;
  });
}

/** A paced step's plan: where it ends, per channel the events to send (by key, the first record under it). */
interface PacedPlan {
  end: number;
  events: Map<string, Map<string, AlertRecord>>;
  /** `<channel> <key>` of the events sent under a key several alerts share (kept in the job). */
  shared: string[];
}

/**
 * Ends the step before the record that would give a channel more than {@link PACED_STEP_EVENTS} events;
 * an event under a key already sent (this step, or an earlier one: `sent`) is not counted or sent again.
 */
async function planPaced(paced: Channel[], mine: (AlertRecord | undefined)[], sent: Set<string>): Promise<PacedPlan> {
  const keys = await Promise.all(paced.map((c) => eventKeys(c, mine)));
  const events = new Map(paced.map((c) => [c.name, new Map<string, AlertRecord>()]));
  const shared: string[] = [];
  let end = 0;
  for (; end < mine.length; end++) {
    const record = mine[end];
    if (!record) continue;
    const adds = paced.flatMap((c, i) => {
      const key = keys[i]![end];
      return key && !events.get(c.name)!.has(key) && !sent.has(`${c.name} ${key}`) ? [{ c, key }] : [];
    });
    if (adds.some(({ c }) => events.get(c.name)!.size >= PACED_STEP_EVENTS)) break;
    for (const { c, key } of adds) {
      events.get(c.name)!.set(key, record);
      if (key !== pagerDutyAckKey(record)) shared.push(`${c.name} ${key}`);
    }
  }
  return { end, events, shared };
}

/** Per record of `mine`, the key of the channel's event for it; `undefined` where none (or not its channel). */
async function eventKeys(channel: Channel, mine: (AlertRecord | undefined)[]): Promise<(string | undefined)[]> {
  const records = mine.filter((r): r is AlertRecord => r?.channels.includes(channel.name) === true);
  const keys = await (channel.ackEventKeys?.(records) ?? pagerDutyAckKeys(records));
  const byRecord = new Map(records.map((r, i) => [r, keys[i]]));
  return mine.map((r) => r && byRecord.get(r));
}

async function sendPaced(channel: AckSetDeps['channels'][number], records: AlertRecord[], deps: AckSetDeps) {
  let ok = true;
  try {
    await deliver(channel, noticeFromRecords('acknowledged', records), { ...deps.delivery, logger: deps.logger });
  } catch (err) {
    ok = false;
    deps.logger.error('follow-up failed', { channel: channel.name, error: (err as Error).message });
  }
  for (const r of records)
    await deps.stores.history.add(
      r.fingerprint,
      { type: 'follow-up', channels: ok ? [channel.name] : [], failed: ok ? [] : [channel.name], startsAt: r.startsAt },
      deps.now(),
    );
}

/**
 * One step as its own invocation (Lambda): runs it, then dispatches the next when one is due. A thrown
 * error makes Lambda retry the invocation (twice): the step is safe to run again.
 * @returns what the step returned
 * @throws the store's or the dispatch's error
 */
export async function runStepThenDispatch(jobId: string, deps: AckSetDeps): Promise<'more' | 'done'> {
  const next = await runSetStep(jobId, deps);
  if (next === 'more') await deps.dispatch(jobId);
  return next;
}

/**
 * Runs a job's steps one after the other in this process (`npm start`, and tests): each step as its
 * own task after the answer. A failed step is logged and tried again after `retryMs`, up to 5 times.
 */
export function inProcessDispatch(
  run: (jobId: string) => Promise<'more' | 'done'>,
  options: { logger: AcknowledgeDeps['logger']; retryMs?: number },
): AckSetDispatch {
  const loop = async (jobId: string, failures: number): Promise<void> => {
    try {
      while ((await run(jobId)) === 'more');
    } catch (err) {
      options.logger.error('alert set step failed', { set: jobId, error: (err as Error).message, failures });
      if (failures < 5) setTimeout(() => void loop(jobId, failures + 1), options.retryMs ?? 30_000).unref?.();
    }
  };
  return async (jobId) => {
    setImmediate(() => void loop(jobId, 0));
  };
}
