/**
 * The contract every channel implements. A channel renders and sends; it never retries,
 * dedupes or records deliveries: the pipeline does (as in Alertmanager's `notify.Notifier`).
 */
import type { Notification } from '../notification.js';

export interface Channel {
  /** Stable name recorded in the delivery ledger (e.g. `slack`); renaming one re-sends in-flight repairs. */
  readonly name: string;
  /**
   * Renders and sends one notification.
   * @param notification the group's new alerts for this channel
   * @param signal aborts the outbound request (per-attempt timeout)
   * @returns when the platform accepted the message
   * @throws DeliveryError when it did not; `retryable` says whether another attempt can help
   */
  send(notification: Notification, signal: AbortSignal): Promise<void>;
}

/**
 * A failed delivery. `retryable` is true for 5xx, 429, time-outs and network errors;
 * false for other 4xx and platform errors that mean bad configuration.
 */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The platform's `Retry-After`, milliseconds, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}

/**
 * The platform refused this message's content (Slack `400 invalid_blocks`, Feishu `9499 Bad Request`,
 * SNS `InvalidParameter` on the message), or the content could not be encoded. Sending the same message
 * again cannot help, so it is not retryable; a reduced rendering may pass, and `deliver` tries one.
 * Told apart from permanent refusals that are about configuration (a wrong URL, token or secret), which
 * the pipeline answers with 5xx so that a fixed configuration repairs the delivery.
 */
export class ContentRefusedError extends DeliveryError {
  constructor(message: string) {
    super(message, false);
    this.name = 'ContentRefusedError';
  }
}
