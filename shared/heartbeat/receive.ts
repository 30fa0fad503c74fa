/**
 * The receiving half of the dead-man's switch: heartbeat alerts (`HEARTBEAT_ALERTNAME`, Alertmanager's
 * always-firing `Watchdog`) are taken out of a webhook message, and a firing one is recorded by its
 * `fingerprint` (the same from every peer of an HA cluster) with the sending Alertmanager (its
 * `externalURL`). They never reach a channel.
 *
 * Anyone who can post to Alertmanager's API (no authentication by default) can make it deliver an
 * alert named `Watchdog`, so only the heartbeat expected is recorded: from the Alertmanagers of
 * `HEARTBEAT_EXTERNAL_URLS` and with a fingerprint of `HEARTBEAT_FINGERPRINTS`, when set; at most
 * `HEARTBEAT_MAX_CLUSTERS` of them either way. Every other one is counted in
 * `heartbeats_ignored_total{reason}` and logged. Names are bounded (`keyPart`) before they become
 * keys, label values or log fields.
 */
import type { WebhookMessage } from '../alertmanager/schema.js';
import type { Logger } from '../core/logger.js';
import { trimTrailing } from '../core/trim.js';
import type { HeartbeatIgnoredReason, Metrics } from '../metrics/catalogue.js';
import type { HeartbeatStore } from '../store/heartbeat.js';
import { keyPart } from '../store/keys.js';

export interface HeartbeatReceiver {
  /** The heartbeat alert's name. */
  alertname: string;
  /**
   * Records that the Alertmanager `externalURL` delivered the heartbeat alerts `fingerprints`, those
   * recognised (see the module's header).
   * @throws the store's error (the webhook then answers 5xx and Alertmanager retries)
   */
  seen(externalURL: string, fingerprints: string[]): Promise<void>;
  /** Told of resolved heartbeat alerts (`fingerprints`) from `externalURL`: their rule stopped firing. Not recorded. */
  stopped(externalURL: string, fingerprints: string[]): void;
}

/** Which heartbeats are recorded (`HEARTBEAT_*` settings). */
export interface HeartbeatRecognition {
  /** `HEARTBEAT_ALERTNAME`. */
  alertname: string;
  /** `HEARTBEAT_EXTERNAL_URLS`: the only Alertmanagers whose heartbeats count (trailing slashes ignored); unset: any. */
  externalUrls?: readonly string[];
  /** `HEARTBEAT_FINGERPRINTS`: the only heartbeat alerts that count; unset: any. */
  fingerprints?: readonly string[];
  /** `HEARTBEAT_MAX_CLUSTERS`: the store's limit, named in the log when it refuses one. */
  maxClusters: number;
}

/**
 * What an Alertmanager with an empty `externalURL` is called in the store, the metrics and the
 * alert: `alertmanager=""` is the "any Alertmanager" series of `heartbeat_missing`.
 */
export const EMPTY_EXTERNAL_URL = '(empty externalURL)';

/**
 * The name a heartbeat's sender is recorded under: its `externalURL`, or {@link EMPTY_EXTERNAL_URL};
 * over 256 bytes (or not well-formed Unicode), its digest `sha256:…` (`keyPart`), as alert keys are.
 */
export function heartbeatSource(externalURL: string): string {
  return externalURL === '' ? EMPTY_EXTERNAL_URL : keyPart(externalURL);
}

/**
 * @returns `beats`: the fingerprints of the firing heartbeat alerts in the message; `stopped`: of the
 *   resolved ones (the rule stopped: not a sign of life); `rest`: the message without heartbeat alerts,
 *   `undefined` when none is left
 */
export function splitHeartbeats(
  message: WebhookMessage,
  alertname: string,
): { beats: string[]; stopped: string[]; rest?: WebhookMessage } {
  const isHeartbeat = (a: WebhookMessage['alerts'][number]) => a.labels.alertname === alertname;
  const heartbeats = message.alerts.filter(isHeartbeat);
  if (heartbeats.length === 0) return { beats: [], stopped: [], rest: message };
  const others = message.alerts.filter((a) => !isHeartbeat(a));
  const of = (status: string) => [...new Set(heartbeats.filter((a) => a.status === status).map((a) => a.fingerprint))];
  return {
    beats: of('firing'),
    stopped: of('resolved'),
    rest: others.length ? { ...message, alerts: others } : undefined,
  };
}

/**
 * Takes the heartbeat alerts out of `message` (the webhook route and AMP's SNS messages both do this
 * before the pipeline). Recording them is left to the caller, after the rest went through the pipeline:
 * a heartbeat whose record fails must not keep the alerts beside it from their channels.
 * @param alertmanager who sent it, when `message.externalURL` does not say (AMP's default text has none)
 * @returns `rest`: what is left for the pipeline, `undefined` when nothing is; `record()`: records the
 *   heartbeats (a no-op without any), throwing the heartbeat store's error
 */
export function takeHeartbeats(
  message: WebhookMessage,
  heartbeat: HeartbeatReceiver | undefined,
  alertmanager = message.externalURL,
): { rest?: WebhookMessage; heartbeats: boolean; record(): Promise<void> } {
  if (!heartbeat) return { rest: message, heartbeats: false, record: async () => {} };
  const { beats, stopped, rest } = splitHeartbeats(message, heartbeat.alertname);
  if (stopped.length) heartbeat.stopped(alertmanager, stopped);
  return {
    rest,
    heartbeats: beats.length + stopped.length > 0,
    record: async () => {
      if (beats.length) await heartbeat.seen(alertmanager, beats);
    },
  };
}

export interface HeartbeatReceiverDeps {
  recognition: HeartbeatRecognition;
  /** Where heartbeats are recorded. */
  store: Pick<HeartbeatStore, 'seen'>;
  /** Sets `heartbeat_last_seen_timestamp_seconds{alertmanager}`, counts `heartbeats_ignored_total{reason}`. */
  metrics: Metrics;
  /** Epoch milliseconds. */
  now: () => number;
  /**
   * Each recorded heartbeat is an info line `heartbeat received` (its Alertmanager and fingerprints):
   * a message of heartbeats only never reaches the pipeline's `group received`.
   */
  logger: Logger;
}

/** The receiver of the heartbeats `deps.recognition` describes. */
export function heartbeatReceiver(deps: HeartbeatReceiverDeps): HeartbeatReceiver {
  const { recognition, logger } = deps;
  const alertname = recognition.alertname;
  const trusted = trustedOf(deps);
  return {
    alertname,
    seen: async (externalURL, given) => {
      const alertmanager = heartbeatSource(externalURL);
      const expected = trusted(externalURL, alertmanager, given.map(keyPart));
      if (expected.length) await record(alertmanager, expected, deps);
    },
    stopped: (externalURL, fingerprints) => {
      logger.warn('heartbeat resolved', {
        alertname,
        alertmanager: heartbeatSource(externalURL),
        fingerprints: fingerprints.map(keyPart),
        detail: `the ${alertname} rule stopped firing (Prometheus or its rule evaluation may be down): not a sign of life; the dead-man's switch raises AlertingPipelineHeartbeatMissing once none arrives for HEARTBEAT_TIMEOUT_SECONDS`,
      });
    },
  };
}

/**
 * The heartbeats of a message that can be trusted: from an Alertmanager of `HEARTBEAT_EXTERNAL_URLS`,
 * with a fingerprint of `HEARTBEAT_FINGERPRINTS` (each when set); the others counted and logged as ignored.
 */
function trustedOf(
  deps: HeartbeatReceiverDeps,
): (externalURL: string, alertmanager: string, fingerprints: string[]) => string[] {
  const { recognition: r, metrics, logger } = deps;
  const expectedUrls = r.externalUrls && new Set(r.externalUrls.map((u) => trimTrailing(u, '/')));
  const expectedFingerprints = r.fingerprints && new Set(r.fingerprints);
  const ignore = (reason: HeartbeatIgnoredReason, alertmanager: string, fingerprints: string[], detail: string) => {
    metrics.inc('heartbeats_ignored_total', { reason }, fingerprints.length);
    logger.warn('heartbeat ignored', { alertname: r.alertname, reason, alertmanager, fingerprints, detail });
  };
  return (externalURL, alertmanager, fingerprints) => {
    if (fingerprints.length === 0) return [];
    if (expectedUrls && !expectedUrls.has(trimTrailing(externalURL, '/'))) {
      ignore('unexpected_alertmanager', alertmanager, fingerprints, 'not in HEARTBEAT_EXTERNAL_URLS');
      return [];
    }
    const unexpected = expectedFingerprints ? fingerprints.filter((f) => !expectedFingerprints.has(f)) : [];
    if (unexpected.length) ignore('unexpected_fingerprint', alertmanager, unexpected, 'not in HEARTBEAT_FINGERPRINTS');
    return fingerprints.filter((f) => !unexpected.includes(f));
  };
}

/** Records the heartbeats of `alertmanager`; those the store refuses (`HEARTBEAT_MAX_CLUSTERS`) are counted and logged. */
async function record(alertmanager: string, expected: string[], deps: HeartbeatReceiverDeps): Promise<void> {
  const { recognition: r, metrics, logger } = deps;
  const alertname = r.alertname;
  const at = deps.now();
  const refused = await deps.store.seen(alertmanager, expected, at);
  if (refused.peer || refused.fingerprints.length) {
    const names = refused.peer ? expected : refused.fingerprints;
    metrics.inc('heartbeats_ignored_total', { reason: 'too_many' }, names.length);
    logger.error('heartbeat not recorded', {
      alertname,
      alertmanager,
      fingerprints: names,
      reason: refused.peer ? 'too many Alertmanagers' : 'too many heartbeat alerts',
      fix: `at most ${r.maxClusters} Alertmanagers and ${r.maxClusters} ${alertname} alerts are watched (HEARTBEAT_MAX_CLUSTERS): set HEARTBEAT_FINGERPRINTS or HEARTBEAT_EXTERNAL_URLS to the heartbeats you expect (alerts named ${alertname} can be posted to an Alertmanager's API by anyone who reaches it), or raise the limit`,
    });
  }
  if (refused.peer) return;
  metrics.set('heartbeat_last_seen_timestamp_seconds', { alertmanager }, at / 1000);
  const recorded = expected.filter((f) => !refused.fingerprints.includes(f));
  if (!recorded.length) return;
  // Without HEARTBEAT_FINGERPRINTS any alert of that name Alertmanager delivers is watched: say how to pin these.
  const pin = r.fingerprints
    ? undefined
    : `HEARTBEAT_FINGERPRINTS=${recorded.join(',')} watches only these (anyone who reaches an Alertmanager's API can post an alert named ${alertname})`;
  logger.info('heartbeat received', { alertname, alertmanager, fingerprints: recorded, ...(pin && { pin }) });
}
