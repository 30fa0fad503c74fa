/**
 * The receiving half of the dead-man's switch: heartbeat alerts (`HEARTBEAT_ALERTNAME`, Alertmanager's
 * always-firing `Watchdog`) are taken out of a webhook message before the pipeline sees it, and a
 * firing one is recorded by its `fingerprint` (the same from every peer of an HA cluster) with the
 * sending Alertmanager (its `externalURL`). They never reach a channel.
 */
import type { WebhookMessage } from '../alertmanager/schema.js';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../metrics/catalogue.js';
import type { HeartbeatStore } from '../store/heartbeat.js';

export interface HeartbeatReceiver {
  /** The heartbeat alert's name. */
  alertname: string;
  /**
   * Records that the Alertmanager `externalURL` delivered the heartbeat alerts `fingerprints`.
   * @throws the store's error (the webhook then answers 5xx and Alertmanager retries)
   */
  seen(externalURL: string, fingerprints: string[]): Promise<void>;
  /** Told of resolved heartbeat alerts (`fingerprints`) from `externalURL`: their rule stopped firing. Not recorded. */
  stopped(externalURL: string, fingerprints: string[]): void;
}

/**
 * What an Alertmanager with an empty `externalURL` is called in the store, the metrics and the
 * alert: `alertmanager=""` is the "any Alertmanager" series of `heartbeat_missing`.
 */
export const EMPTY_EXTERNAL_URL = '(empty externalURL)';

/** The name a heartbeat's sender is recorded under: its `externalURL`, or {@link EMPTY_EXTERNAL_URL}. */
export function heartbeatSource(externalURL: string): string {
  return externalURL === '' ? EMPTY_EXTERNAL_URL : externalURL;
}

/**
 * @returns `beats`: the fingerprints of the firing heartbeat alerts in the message; `stopped`: of the
 *   resolved ones (the rule stopped: not a sign of life); `rest`: the message without heartbeat alerts,
 *   `undefined` when none is left
 */
export function splitHeartbeats(message: WebhookMessage, alertname: string): { beats: string[]; stopped: string[]; rest?: WebhookMessage } {
  const isHeartbeat = (a: WebhookMessage['alerts'][number]) => a.labels.alertname === alertname;
  const heartbeats = message.alerts.filter(isHeartbeat);
  if (heartbeats.length === 0) return { beats: [], stopped: [], rest: message };
  const others = message.alerts.filter((a) => !isHeartbeat(a));
  const of = (status: string) => [...new Set(heartbeats.filter((a) => a.status === status).map((a) => a.fingerprint))];
  return { beats: of('firing'), stopped: of('resolved'), rest: others.length ? { ...message, alerts: others } : undefined };
}

/**
 * Records a heartbeat in `message` and takes the heartbeat alerts out (the webhook route and AMP's SNS
 * messages both do this before the pipeline).
 * @param alertmanager who sent it, when `message.externalURL` does not say (AMP's default text has none)
 * @returns what is left for the pipeline, `undefined` when nothing is
 * @throws the heartbeat store's error (answered 503: Alertmanager retries; AMP: Lambda retries)
 */
export async function takeHeartbeats(message: WebhookMessage, heartbeat: HeartbeatReceiver | undefined, alertmanager = message.externalURL): Promise<WebhookMessage | undefined> {
  if (!heartbeat) return message;
  const { beats, stopped, rest } = splitHeartbeats(message, heartbeat.alertname);
  if (stopped.length) heartbeat.stopped(alertmanager, stopped);
  if (beats.length) await heartbeat.seen(alertmanager, beats);
  return rest;
}

/**
 * @param store where heartbeats are recorded
 * @param metrics sets `heartbeat_last_seen_timestamp_seconds{alertmanager}`
 * @param now epoch milliseconds
 * @param logger each recorded heartbeat is an info line `heartbeat received` (its Alertmanager and
 *   fingerprints): a message of heartbeats only never reaches the pipeline's `group received`
 */
export function heartbeatReceiver(alertname: string, store: Pick<HeartbeatStore, 'seen'>, metrics: Metrics, now: () => number, logger: Logger): HeartbeatReceiver {
  return {
    alertname,
    seen: async (externalURL, fingerprints) => {
      if (fingerprints.length === 0) return;
      const at = now();
      const alertmanager = heartbeatSource(externalURL);
      await store.seen(alertmanager, fingerprints, at);
      metrics.set('heartbeat_last_seen_timestamp_seconds', { alertmanager }, at / 1000);
      logger.info('heartbeat received', { alertname, alertmanager, fingerprints });
    },
    stopped: (externalURL, fingerprints) => {
      logger.warn('heartbeat resolved', {
        alertname,
        alertmanager: heartbeatSource(externalURL),
        fingerprints,
        detail: `the ${alertname} rule stopped firing (Prometheus or its rule evaluation may be down): not a sign of life; the dead-man's switch raises AlertingPipelineHeartbeatMissing once none arrives for HEARTBEAT_TIMEOUT_SECONDS`,
      });
    },
  };
}
