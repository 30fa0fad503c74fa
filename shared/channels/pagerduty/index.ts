/**
 * The PagerDuty channel: POSTs each rendered event (`render.ts`) to the Events API v2, a few at a
 * time ({@link EVENT_CONCURRENCY}; each is about a different alert, so their order does not matter), through the shared HTTP client (`../http.ts`: no redirects, `Retry-After`, errors
 * without secrets). The pipeline's `deliver` retries; this file classifies PagerDuty's answers:
 * - 202 (any 2xx): accepted.
 * - 400: the event is invalid ("Bad Request - Check that the JSON is valid. Retry? No"): a
 *   {@link ContentRefusedError} quoting PagerDuty's `message` and `errors`, so the pipeline logs it at
 *   error level and counts the channel `refused` (the group is answered 200: a resend would be refused
 *   again). It is not sent again, reduced or not. The other events of the notification are still
 *   sent: one bad alert must not block its group.
 * - 429 and 5xx, time-outs, network errors: retryable ("Yes - retry after some time"), with the
 *   reply's `Retry-After` when it sends one.
 * - Any other status (a wrong `PAGERDUTY_EVENTS_URL`: 404; a redirect): permanent, a configuration error.
 * PagerDuty's events are idempotent per `dedup_key` (a repeated `trigger` adds a log entry to the open
 * alert, a repeated `resolve` is dropped), so a retry may repeat one; still, what PagerDuty answered
 * to each event is remembered for the notification's retries ({@link Progress}). A storm's alerts follow
 * the storm's one PagerDuty alert (`storms.ts`).
 * @see https://developer.pagerduty.com/docs/events-api-v2/overview/#response-codes--retry-logic
 * @see https://developer.pagerduty.com/docs/events-api-v2/trigger-events/
 */
import pLimit from 'p-limit';
import type { Notification } from '../../render/notification.js';
import type { Secret } from '../../core/secret.js';
import { postJson } from '../http.js';
import { ContentRefusedError, DeliveryError, type Channel } from '../channel.js';
import type { RenderedEvent } from './render.js';
import { planPagerDutyEvents } from './storms.js';
import { pagerDutyAckKeys } from './ack-keys.js';
import type { PagerDutyStormStore } from '../../store/pagerduty-storms.js';
import { PAGERDUTY_EVENTS_PER_MINUTE, PAGERDUTY_EVENTS_URL } from './wire.js';

export interface PagerDutyChannelOptions {
  /** The Events API v2 integration key (`PAGERDUTY_ROUTING_KEY`, or the routing file's `routingKey`). */
  routingKey: Secret;
  /** Default {@link PAGERDUTY_EVENTS_URL} (`PAGERDUTY_EVENTS_URL`). */
  eventsUrl?: string;
  /** The instance name recorded in the ledger; default `pagerduty`. */
  name?: string;
  /** Storm threshold (see `render.ts`). */
  digestAbove?: number;
  /** Where the instance remembers its storms' alerts (`storms.ts`); unset: none remembered. */
  storms?: PagerDutyStormStore;
  /** Epoch milliseconds; default `Date.now`. */
  now?: () => number;
}

/**
 * What PagerDuty answered to the events of one notification, by notification object, so that its
 * retries (`deliver` sends the same object again) skip them: accepted events are not sent again
 * (PagerDuty's rate limit), refused ones neither (a 400 is never retried).
 */
type Progress = { accepted: Set<string>; refused: Map<string, string> };
const eventId = (e: RenderedEvent) => `${e.event_action} ${e.dedup_key}`;

/**
 * Events of one notification in flight at once. Sequential posts of a 50-alert group to PagerDuty
 * (≈ 100–200 ms each from AWS) would not fit one attempt's time-out (`DELIVERY_TIMEOUT_MS`, 5 s);
 * the rate limit counts events, not connections, so a few at a time spend it no faster.
 */
export const EVENT_CONCURRENCY = 5;

/** Creates the channel; see the file header for how replies are classified. */
export function createPagerDutyChannel(options: PagerDutyChannelOptions): Channel {
  const name = options.name ?? 'pagerduty';
  const url = options.eventsUrl ?? PAGERDUTY_EVENTS_URL;
  const progress = new WeakMap<Notification, Progress>();
  const plan = { store: options.storms, channel: name, digestAbove: options.digestAbove, now: options.now ?? Date.now };
  const post = (event: RenderedEvent, signal: AbortSignal) =>
    postJson(
      { channel: name, url, refusesContent: (status) => status === 400 },
      { routing_key: options.routingKey.reveal(), ...event },
      signal,
    );
  return {
    name,
    eventsPerMinute: PAGERDUTY_EVENTS_PER_MINUTE,
    ackEventKeys: (records) => pagerDutyAckKeys(records, plan.store && { ...plan, store: plan.store }),
    async send(notification, signal) {
      const p = progress.get(notification) ?? { accepted: new Set<string>(), refused: new Map<string, string>() };
      progress.set(notification, p);
      const events = await planPagerDutyEvents(notification, plan).catch((err: Error) => {
        throw new DeliveryError(`${name}: storm store failed (${err.name})`, { retryable: true, reason: 'other' });
      });
      await sendEvents(events, p, (event) => post(event, signal), name);
      if (p.refused.size === 0) return;
      const refused = [...p.refused].map(([id, message]) => `${id}: ${message}`);
      // Not `reducedMayPass`: PagerDuty checks the fields the renderer sets, a reduced rendering is the same event.
      throw new ContentRefusedError(`${name}: PagerDuty refused ${refused.length} event(s): ${refused.join('; ')}`, {
        reducedMayPass: false,
      });
    },
  };
}

/**
 * Posts the events not answered before, {@link EVENT_CONCURRENCY} at a time, noting each answer in `p`.
 * @throws the first retryable or configuration error (nothing new starts after it); a refused event does not
 *   stop the others
 */
async function sendEvents(
  events: RenderedEvent[],
  p: Progress,
  post: (event: RenderedEvent) => Promise<unknown>,
  name: string,
): Promise<void> {
  const limit = pLimit(EVENT_CONCURRENCY);
  let failed: unknown;
  const sendOne = async (event: RenderedEvent) => {
    const id = eventId(event);
    // After a retryable or configuration error, the attempt is over: start nothing new.
    if (failed !== undefined || p.accepted.has(id) || p.refused.has(id)) return;
    try {
      await post(event);
      p.accepted.add(id);
    } catch (err) {
      if (err instanceof ContentRefusedError) p.refused.set(id, err.message.slice(name.length + 2));
      else failed ??= err;
    }
  };
  await Promise.all(events.map((event) => limit(() => sendOne(event))));
  if (failed !== undefined) throw failed;
}
