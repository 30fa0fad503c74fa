/**
 * The receiving half of the dead-man's switch: heartbeat alerts (`HEARTBEAT_ALERTNAME`, Alertmanager's
 * always-firing `Watchdog`) are taken out of a webhook message before the pipeline sees it, and a
 * firing one records the sending Alertmanager (its `externalURL`) as seen. They never reach a channel.
 */
import type { WebhookMessage } from '../alertmanager/schema.js';
import type { Metrics } from '../metrics/catalogue.js';
import type { HeartbeatStore } from '../store/heartbeat.js';

export interface HeartbeatReceiver {
  /** The heartbeat alert's name. */
  alertname: string;
  /**
   * Records a heartbeat from `alertmanager`.
   * @throws the store's error (the webhook then answers 5xx and Alertmanager retries)
   */
  seen(alertmanager: string): Promise<void>;
}

/**
 * @returns `beat`: whether a firing heartbeat alert is in the message (a resolved one means the
 *   rule stopped: not a sign of life); `rest`: the message without heartbeat alerts, `undefined` when
 *   none is left
 */
export function splitHeartbeats(message: WebhookMessage, alertname: string): { beat: boolean; rest?: WebhookMessage } {
  const isHeartbeat = (a: WebhookMessage['alerts'][number]) => a.labels.alertname === alertname;
  const beats = message.alerts.filter(isHeartbeat);
  if (beats.length === 0) return { beat: false, rest: message };
  const others = message.alerts.filter((a) => !isHeartbeat(a));
  return { beat: beats.some((a) => a.status === 'firing'), rest: others.length ? { ...message, alerts: others } : undefined };
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
  const { beat, rest } = splitHeartbeats(message, heartbeat.alertname);
  if (beat) await heartbeat.seen(alertmanager);
  return rest;
}

/**
 * @param store where heartbeats are recorded
 * @param metrics sets `heartbeat_last_seen_timestamp_seconds{alertmanager}`
 * @param now epoch milliseconds
 */
export function heartbeatReceiver(alertname: string, store: Pick<HeartbeatStore, 'seen'>, metrics: Metrics, now: () => number): HeartbeatReceiver {
  return {
    alertname,
    seen: async (alertmanager) => {
      const at = now();
      await store.seen(alertmanager, at);
      metrics.set('heartbeat_last_seen_timestamp_seconds', { alertmanager }, at / 1000);
    },
  };
}
