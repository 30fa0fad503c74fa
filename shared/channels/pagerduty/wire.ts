/**
 * The PagerDuty Events API v2 wire format: an alert event (`trigger`, `acknowledge`, `resolve`) and
 * the platform's limits, named next to their source.
 * @see https://developer.pagerduty.com/docs/events-api-v2/trigger-events/ ("Send an Alert Event")
 * @see https://developer.pagerduty.com/docs/events-api-v2/overview/ (response codes, size limit)
 * @see https://developer.pagerduty.com/docs/events-api-v2/rate-limits/ ("approximately 120 calls/minute
 *   per integration key", a 60 s sliding window; why a storm is one event, `render.ts`)
 */

/** The default endpoint (`PAGERDUTY_EVENTS_URL` overrides it). */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';
/** `payload.summary`, characters. */
export const PAGERDUTY_MAX_SUMMARY_CHARS = 1024;
/** `dedup_key`, characters. */
export const PAGERDUTY_MAX_DEDUP_KEY_CHARS = 255;
/** A whole event, bytes ("Events API payloads are limited to 512 KB"). */
export const PAGERDUTY_MAX_EVENT_BYTES = 512 * 1024;
/** The integration key (`routing_key`): "the 32 character Integration Key for an integration on a service or on a global ruleset". */
export const PAGERDUTY_ROUTING_KEY_CHARS = 32;

/** PagerDuty's four severities (`payload.severity`). */
export type PagerDutySeverity = 'critical' | 'error' | 'warning' | 'info';

/** `links[]`: a text link on the alert. */
export interface PagerDutyLink {
  href: string;
  text?: string;
}

/** `payload` of a `trigger` (PagerDuty Common Event Format). */
export interface PagerDutyPayload {
  /** At most {@link PAGERDUTY_MAX_SUMMARY_CHARS} characters. */
  summary: string;
  /** "The unique location of the affected system, preferably a hostname or FQDN." Never empty. */
  source: string;
  severity: PagerDutySeverity;
  /** ISO 8601: when the problem was detected (the alert's `startsAt`). */
  timestamp?: string;
  component?: string;
  group?: string;
  class?: string;
  custom_details?: Record<string, unknown>;
}

/** A `trigger` event: opens an alert, or adds a log entry to the open alert of the same `dedup_key`. */
export interface PagerDutyTrigger {
  routing_key: string;
  event_action: 'trigger';
  dedup_key: string;
  payload: PagerDutyPayload;
  links?: PagerDutyLink[];
  client?: string;
  client_url?: string;
}

/**
 * An `acknowledge` or `resolve` event: applies to the open alert of `dedup_key` sent through the same
 * `routing_key`; dropped by PagerDuty when there is none (already resolved, never triggered).
 */
export interface PagerDutyFollowUp {
  routing_key: string;
  event_action: 'acknowledge' | 'resolve';
  dedup_key: string;
}

/**
 * Events a minute PagerDuty accepts per integration key before answering 429 (documented as "around 120").
 * @see https://developer.pagerduty.com/docs/events-api-v2/overview/#rate-limits
 */
export const PAGERDUTY_EVENTS_PER_MINUTE = 120;
