/**
 * The contract every channel implements. A channel renders and sends; it never retries,
 * dedupes or records deliveries: the pipeline does (as in Alertmanager's `notify.Notifier`).
 */
import { PipelineError } from '../core/errors.js';
import type { Locale } from '../core/locale.js';
import type { Notification } from '../render/notification.js';
import type { AlertRecord } from '../store/alert-record.js';

export interface Channel {
  /** Stable name recorded in the delivery ledger (e.g. `slack`); renaming one re-sends in-flight repairs. */
  readonly name: string;
  /**
   * The channel keeps one thread per alert group and updates its first message in place (the Slack
   * app): the escalation is also sent to it, as an update of that thread, besides the escalation targets.
   */
  readonly threaded?: boolean;
  /** The language its messages are in (unset: English); the acknowledgement links it carries open pages in it. */
  readonly locale?: Locale;
  /**
   * The platform counts one event per alert of a notification against this many a minute (PagerDuty:
   * about 120 per integration key). Follow-ups for a large alert set are then paced (`shared/ack/set-job.ts`).
   */
  readonly eventsPerMinute?: number;
  /**
   * With {@link eventsPerMinute}: the key of the one event an `acknowledged` follow-up sends for each stored
   * alert (alerts sharing a key share that event: a PagerDuty storm's alerts its `group/<hash>`), `undefined`
   * for one it sends none for. What the paced follow-ups of an alert set count and send by. Unset: one event
   * per alert.
   * @returns one entry per record, in order
   * @throws the channel's store error
   */
  ackEventKeys?(
    records: readonly Pick<AlertRecord, 'alert' | 'generation' | 'groupKey'>[],
  ): Promise<(string | undefined)[]>;
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
 * Why a delivery failed, as a metric label (`notifications_total{reason}`): a short closed set, like
 * Alertmanager's `notifications_failed_total{reason}`, never the free-text message.
 * - `timeout`, `network`: no reply (time-out, refused, reset, DNS);
 * - `rate_limited`: 429 or the platform's own rate-limit code;
 * - `server_error`: 5xx; `client_error`: any other non-2xx status (bad URL, missing topic, forbidden);
 * - `platform_error`: a reply that says "failed" some other way (Slack's plain-text error, Feishu's `code`);
 * - `content_refused`: the platform refused this message's content ({@link ContentRefusedError});
 * - `other`: not a {@link DeliveryError} (a bug in a channel).
 */
export type DeliveryFailureReason =
  | 'timeout'
  | 'network'
  | 'rate_limited'
  | 'server_error'
  | 'client_error'
  | 'platform_error'
  | 'content_refused'
  | 'other';

/**
 * What an attempt that timed out when the platform may have had the whole message says: after its body
 * was sent (plain HTTP channels), or at any point of a platform SDK's request (it does not tell).
 */
export const UNKNOWN_OUTCOME_MESSAGE =
  'request timed out or was aborted after the whole message was sent: it may have been delivered';

/** How a delivery failed, besides its message: what {@link DeliveryError} carries. */
export interface DeliveryFailure {
  /** Another attempt can help: 5xx, 429, time-outs and network errors; not other 4xx or bad configuration. */
  retryable: boolean;
  /** The platform's `Retry-After`, milliseconds, when it sent one. */
  retryAfterMs?: number;
  /** For metrics; default `platform_error`. */
  reason?: DeliveryFailureReason;
  /** The error this one wraps (only one that cannot carry a secret: see `PipelineError`). */
  cause?: unknown;
  /**
   * The platform may have had the whole message and no answer came in time (the attempt timed out after
   * its body was sent, or inside a platform SDK's request): it may have been delivered.
   */
  outcomeUnknown?: boolean;
}

/**
 * A failed delivery, retryable or not ({@link DeliveryFailure}). One with `outcomeUnknown` may have been
 * delivered: `deliver` tries such a message at most once more.
 */
export class DeliveryError extends PipelineError<DeliveryFailureReason> {
  readonly retryable: boolean;
  /** The platform's `Retry-After`, milliseconds, when it sent one. */
  readonly retryAfterMs?: number;
  readonly outcomeUnknown: boolean;

  constructor(message: string, failure: DeliveryFailure) {
    const { cause, reason = 'platform_error' } = failure;
    super(message, reason, cause === undefined ? undefined : { cause });
    this.name = 'DeliveryError';
    this.retryable = failure.retryable;
    this.retryAfterMs = failure.retryAfterMs;
    this.outcomeUnknown = failure.outcomeUnknown ?? false;
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
  /**
   * @param options.reducedMayPass false when a reduced rendering cannot change what was refused (PagerDuty's
   *   400 is about the event's fields, which the renderer sets; reducing would send the same event again)
   */
  constructor(
    message: string,
    readonly options: { reducedMayPass?: boolean } = {},
  ) {
    super(message, { retryable: false, reason: 'content_refused' });
    this.name = 'ContentRefusedError';
  }
}

/** The metric reason of any error a delivery threw. */
export function deliveryFailureReason(err: unknown): DeliveryFailureReason {
  return err instanceof DeliveryError ? err.reason : 'other';
}

/** The reason of a non-2xx HTTP status. */
export function httpFailureReason(status: number): DeliveryFailureReason {
  if (status === 429) return 'rate_limited';
  return status >= 500 ? 'server_error' : 'client_error';
}
