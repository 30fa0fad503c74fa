/**
 * The checking half of the dead-man's switch. Run on a schedule (EventBridge Scheduler in AWS, a
 * timer under `npm start`). A heartbeat proves the path for one heartbeat alert, whichever peer of an
 * Alertmanager HA cluster delivered it (only one peer normally sends a group's notification; the
 * others find it in the gossiped notification log and skip). So the unit watched is the heartbeat
 * alert (its `fingerprint`) with the peers that delivered it: when none of them delivered it for
 * `HEARTBEAT_TIMEOUT_SECONDS`, `AlertingPipelineHeartbeatMissing` is raised through the normal
 * pipeline; once it is back, the alert is resolved with the labels it was raised with. Every run
 * re-sends the firing alert while it lasts: the dedupe ledger absorbs the repeats and repairs a
 * channel that failed, as Alertmanager's `repeat_interval` does.
 *
 * A heartbeat never received is only warned about (see `neverSeen`), not raised. One delivered only
 * once and silent since (a `Watchdog` posted to an Alertmanager's API by hand, then resolved) is
 * forgotten with a warning, not raised: a real heartbeat repeats. So is a peer left in no cluster, and a
 * heartbeat `HEARTBEAT_FINGERPRINTS` / `HEARTBEAT_EXTERNAL_URLS` do not allow (set after fakes took places).
 * One heartbeat whose record cannot be read is logged; the others are checked.
 */
import type { Enrichment } from '../enrich/types.js';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../metrics/catalogue.js';
import { processGroup, type PipelineDeps } from '../pipeline/index.js';
import { heartbeatMissingMessage, missingHeartbeatLabels, PEER_SEPARATOR } from './alert.js';
import type { HeartbeatSnapshot, HeartbeatStore, WatchdogRecord } from '../store/heartbeat.js';
import { trimTrailing } from '../core/trim.js';

export interface HeartbeatCheckDeps {
  store: HeartbeatStore;
  /** The pipeline the alert goes through (channels, routing, dedupe, acknowledgement, escalation). */
  pipeline: PipelineDeps;
  /**
   * `fingerprints` (`HEARTBEAT_FINGERPRINTS`) and `externalUrls` (`HEARTBEAT_EXTERNAL_URLS`), when set: the only
   * heartbeats watched. A record of another (recorded before they were set, e.g. a `Watchdog` posted to an
   * Alertmanager's API) is forgotten, its raised alert resolved first: it frees its place and pages nobody.
   */
  settings: {
    alertname: string;
    timeoutSeconds: number;
    fingerprints?: readonly string[];
    externalUrls?: readonly string[];
  };
  metrics: Metrics;
  logger: Logger;
  /** Epoch milliseconds. */
  now(): number;
}

/**
 * What one check found, per cluster: `waiting`/`never_seen` (key `""`) while no heartbeat was ever
 * received, within / after a full timeout since the check was armed.
 */
export type HeartbeatState =
  | 'ok'
  | 'missing'
  | 'raised'
  | 'resolving'
  | 'resolved'
  | 'failed'
  | 'waiting'
  | 'never_seen'
  | 'forgotten';

/**
 * Checks every heartbeat alert seen. Never throws: a failure for one is logged and the others are checked.
 * @returns each cluster's state after the check, keyed by its `alertmanager` label (peers joined;
 *   with ` <fingerprint>` appended when two heartbeat alerts share the peers)
 */
export async function checkHeartbeats(deps: HeartbeatCheckDeps): Promise<Record<string, HeartbeatState>> {
  const now = deps.now();
  const snapshot = await readSnapshot(now, deps);
  if (!snapshot) return {};
  const isMissing = (w: WatchdogRecord) => now - w.lastSeenMs > deps.settings.timeoutSeconds * 1000;
  const states: Record<string, HeartbeatState> = {};
  const watchdogs: WatchdogRecord[] = [];
  const expected = expectedHeartbeats(deps.settings);
  for (const w of snapshot.watchdogs) {
    const key = stateKey(w, snapshot.watchdogs);
    if (!expected(w)) states[key] = await unexpected(w, now, deps);
    else if (isMissing(w) && !w.established && !w.raised) states[key] = await forget(w, deps);
    else watchdogs.push(w);
  }
  const checked = { ...snapshot, watchdogs };
  await forgetLonePeers(checked, now, deps);
  reportPeers(checked, isMissing, deps.metrics);
  const never = neverSeen(checked, now, deps);
  // Every run reports, even with nothing seen yet: the CloudWatch alarm on the plain name (no
  // dimensions, Maximum) treats no data as a check that stopped. The empty `alertmanager` is "any
  // Alertmanager", or none ever heard of; the EMF adapter drops empty dimensions. Set before any
  // message goes out, so a scrape after a channel has the resolve never reads the old state. A
  // record that could not be read counts as missing: the check cannot vouch for it.
  const anyMissing = never === 'never_seen' || watchdogs.some(isMissing) || snapshot.unreadable.length > 0;
  deps.metrics.set('heartbeat_missing', { alertmanager: '' }, anyMissing ? 1 : 0);
  if (never) states[''] = never;
  for (const watchdog of watchdogs) {
    const key = stateKey(watchdog, watchdogs);
    try {
      states[key] = await checkOne(watchdog, isMissing(watchdog), now, deps);
    } catch (err) {
      states[key] = 'failed';
      deps.logger.error('heartbeat check failed', { alertmanager: key, fingerprint: watchdog.fingerprint, error: err });
    }
  }
  return states;
}

/** Whether a record is of a heartbeat `HEARTBEAT_FINGERPRINTS` and `HEARTBEAT_EXTERNAL_URLS` allow (each when set). */
function expectedHeartbeats(settings: HeartbeatCheckDeps['settings']): (w: WatchdogRecord) => boolean {
  const fingerprints = settings.fingerprints && new Set(settings.fingerprints);
  const urls = settings.externalUrls && new Set(settings.externalUrls.map((u) => trimTrailing(u, '/')));
  return (w) =>
    (!fingerprints || fingerprints.has(w.fingerprint)) &&
    (!urls || w.peers.some((peer) => urls.has(trimTrailing(peer, '/'))));
}

/**
 * A record of a heartbeat not expected any more: its raised alert resolved (the pin says it was never the
 * switch's), then, on a later check, the record forgotten.
 */
async function unexpected(w: WatchdogRecord, now: number, deps: HeartbeatCheckDeps): Promise<HeartbeatState> {
  if (w.raised) {
    try {
      return await resolveBack(w, w.raised, now, deps);
    } catch (error) {
      deps.logger.error('heartbeat check failed', { fingerprint: w.fingerprint, error });
      return 'failed';
    }
  }
  return forget(w, deps, 'not in HEARTBEAT_FINGERPRINTS / HEARTBEAT_EXTERNAL_URLS: not watched');
}

/**
 * Forgets a heartbeat alert delivered only once and silent since, with a warning: a real heartbeat
 * repeats (every `repeat_interval`), a `Watchdog` posted by hand does not, and raising a critical alert
 * for each would hand anyone who reaches Alertmanager's API a pager. Also one the settings do not expect.
 * @param why the warning's `detail`; default: delivered once
 */
async function forget(w: WatchdogRecord, deps: HeartbeatCheckDeps, why?: string): Promise<HeartbeatState> {
  try {
    if (!(await deps.store.forgetWatchdog(w.fingerprint, w.lastSeenMs))) return 'ok'; // delivered again meanwhile
  } catch (error) {
    deps.logger.error('heartbeat check failed', { fingerprint: w.fingerprint, error });
    return 'failed';
  }
  deps.logger.warn('heartbeat forgotten', {
    alertmanager: w.peers.join(PEER_SEPARATOR),
    fingerprint: w.fingerprint,
    lastSeen: new Date(w.lastSeenMs).toISOString(),
    detail:
      why ??
      `delivered once and not again for HEARTBEAT_TIMEOUT_SECONDS (${deps.settings.timeoutSeconds} s): not a heartbeat that repeats, so not watched (an alert named ${deps.settings.alertname} posted to an Alertmanager by hand looks like this). A real one is watched again from its next two deliveries.`,
  });
  return 'forgotten';
}

/** Forgets the peers no watched heartbeat names any more and silent for a timeout, and their gauges' series. */
async function forgetLonePeers(snapshot: HeartbeatSnapshot, now: number, deps: HeartbeatCheckDeps): Promise<void> {
  const named = new Set(snapshot.watchdogs.flatMap((w) => w.peers));
  const lone = snapshot.peers.filter(
    (p) => !named.has(p.alertmanager) && now - p.lastSeenMs > deps.settings.timeoutSeconds * 1000,
  );
  for (const peer of lone) {
    try {
      if (!(await deps.store.forgetPeer(peer.alertmanager, peer.lastSeenMs))) continue;
    } catch (error) {
      deps.logger.error('heartbeat check failed', { alertmanager: peer.alertmanager, error });
      continue;
    }
    snapshot.peers = snapshot.peers.filter((p) => p !== peer);
    deps.metrics.forget?.('heartbeat_last_seen_timestamp_seconds', { alertmanager: peer.alertmanager });
    deps.metrics.forget?.('heartbeat_missing', { alertmanager: peer.alertmanager });
  }
}

/** Per peer: its own last delivery, and whether a cluster it belongs to is missing. */
function reportPeers(snapshot: HeartbeatSnapshot, isMissing: (w: WatchdogRecord) => boolean, metrics: Metrics): void {
  for (const { alertmanager, lastSeenMs } of snapshot.peers) {
    metrics.set('heartbeat_last_seen_timestamp_seconds', { alertmanager }, lastSeenMs / 1000);
    const clusters = snapshot.watchdogs.filter((w) => w.peers.includes(alertmanager));
    if (clusters.length) metrics.set('heartbeat_missing', { alertmanager }, clusters.some(isMissing) ? 1 : 0);
  }
}

/** The store's heartbeat records now (each unreadable one logged); `undefined` when the store cannot be read (logged). */
async function readSnapshot(now: number, deps: HeartbeatCheckDeps): Promise<HeartbeatSnapshot | undefined> {
  let snapshot: HeartbeatSnapshot;
  try {
    snapshot = await deps.store.snapshot(now);
  } catch (err) {
    deps.logger.error('heartbeat check failed', { error: err });
    return undefined;
  }
  for (const { name, error } of snapshot.unreadable)
    deps.logger.error('heartbeat check failed', {
      name,
      error,
      detail: 'this record could not be read; the others are checked',
    });
  return snapshot;
}

function stateKey(watchdog: WatchdogRecord, all: WatchdogRecord[]): string {
  const peers = watchdog.peers.join(PEER_SEPARATOR);
  const shared = all.some((w) => w !== watchdog && w.peers.join(PEER_SEPARATOR) === peers);
  return shared ? `${peers} ${watchdog.fingerprint}` : peers;
}

/** One cluster's check: raise (or repeat) its missing-heartbeat alert, resolve it when heartbeats are back, or nothing. */
async function checkOne(
  watchdog: WatchdogRecord,
  missing: boolean,
  now: number,
  deps: HeartbeatCheckDeps,
): Promise<HeartbeatState> {
  if (missing) return raiseMissing(watchdog, now, deps);
  return watchdog.raised ? resolveBack(watchdog, watchdog.raised, now, deps) : 'ok';
}

/** Raises the alert of a missing heartbeat (once, by the check that marks it), or sends it again while it stays missing. */
async function raiseMissing(watchdog: WatchdogRecord, now: number, deps: HeartbeatCheckDeps): Promise<HeartbeatState> {
  const { fingerprint, lastSeenMs, raised } = watchdog;
  const { alertname: heartbeatAlertname, timeoutSeconds } = deps.settings;
  const alert = raised ?? { sinceMs: now, labels: missingHeartbeatLabels(watchdog.peers, fingerprint) };
  // Of concurrent checks, the one that marks it raises it; the others find the mark next time.
  if (!raised && !(await deps.store.markMissing(fingerprint, alert))) return 'missing';
  if (!raised)
    deps.logger.error('heartbeat missing', {
      alertmanager: alert.labels.alertmanager,
      fingerprint,
      lastSeen: new Date(lastSeenMs).toISOString(),
      timeoutSeconds,
    });
  const missing = { labels: alert.labels, heartbeatAlertname, lastSeenMs, sinceMs: alert.sinceMs, timeoutSeconds };
  await send(heartbeatMissingMessage(missing), deps);
  return raised ? 'missing' : 'raised';
}

/** Resolves the raised alert of heartbeats that are back; the mark is cleared only once every channel has the resolve. */
async function resolveBack(
  watchdog: WatchdogRecord,
  raised: NonNullable<WatchdogRecord['raised']>,
  now: number,
  deps: HeartbeatCheckDeps,
): Promise<HeartbeatState> {
  const { fingerprint, lastSeenMs } = watchdog;
  const { alertname: heartbeatAlertname, timeoutSeconds } = deps.settings;
  // The labels raised, not today's peers: a peer that joined meanwhile must not orphan the alert.
  const message = heartbeatMissingMessage(
    { labels: raised.labels, heartbeatAlertname, lastSeenMs, sinceMs: raised.sinceMs, timeoutSeconds },
    now,
  );
  // Until every channel has it, each check repairs it.
  if (!(await send(message, deps))) return 'resolving';
  await deps.store.clearMissing(fingerprint, raised.sinceMs);
  deps.logger.info('heartbeat back', {
    alertmanager: raised.labels.alertmanager,
    fingerprint,
    lastSeen: new Date(lastSeenMs).toISOString(),
  });
  return 'resolved';
}

/**
 * No heartbeat ever received (a mis-routed Watchdog, a `HEARTBEAT_ALERTNAME` typo, or `npm start`'s
 * in-memory store restarted while every Alertmanager is down): after a full timeout since the check
 * was armed, a warning on every check and `heartbeat_missing{alertmanager=""}` 1 (the rule
 * AlertPipelineHeartbeatNeverSeen and the CloudWatch alarm watch it). Not raised as the critical
 * `AlertingPipelineHeartbeatMissing`: with the switch on by default, a first run that has not routed
 * the Watchdog yet is the usual cause, and paging people for it would teach them to turn it off.
 * @returns `undefined` once a heartbeat was received
 */
function neverSeen(
  snapshot: HeartbeatSnapshot,
  now: number,
  deps: HeartbeatCheckDeps,
): 'waiting' | 'never_seen' | undefined {
  if (snapshot.watchdogs.length || snapshot.unreadable.length) return undefined;
  const { alertname, timeoutSeconds } = deps.settings;
  if (now - snapshot.armedSinceMs <= timeoutSeconds * 1000) return 'waiting';
  deps.logger.warn('heartbeat never received', {
    heartbeatAlertname: alertname,
    armedSince: new Date(snapshot.armedSinceMs).toISOString(),
    timeoutSeconds,
    fix:
      `no ${alertname} alert has reached this webhook since the check started: HEARTBEAT_ALERTNAME (${alertname}) must be the name of the ` +
      'always-firing rule (infra/prometheus/pipeline-rules.yml), and every Alertmanager needs a route with matchers ' +
      `[alertname="${alertname}"] to this webhook, repeat_interval well under HEARTBEAT_TIMEOUT_SECONDS (infra/alertmanager/alertmanager.example.yml). ` +
      'Or every Alertmanager is down since then. HEARTBEAT_ALERTNAME="" turns the switch off.',
  });
  return 'never_seen';
}

/** @returns whether every channel has it */
async function send(message: ReturnType<typeof heartbeatMissingMessage>, deps: HeartbeatCheckDeps): Promise<boolean> {
  // Never marked flapping: a flapping mark reads as noise (docs/routing.md's SNS filter policy drops it from phones),
  // and a real Alertmanager outage right after a blip is exactly what this alert exists for.
  const result = await processGroup(message, { ...deps.pipeline, enrich: notFromPrometheus, flapWindowMs: 0 });
  return result.ok;
}

/** The pipeline's own alert has no rule expression to ask Prometheus about. */
async function notFromPrometheus(alerts: { fingerprint: string }[]): Promise<Map<string, Enrichment>> {
  return new Map(
    alerts.map((a) => [
      a.fingerprint,
      {
        status: 'unavailable',
        kind: 'unknown',
        reason: 'raised by the pipeline itself, not by a Prometheus rule',
        cause: 'no_query',
      },
    ]),
  );
}
