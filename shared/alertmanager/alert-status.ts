/**
 * Asks Alertmanager whether an alert is silenced or inhibited right now, before it escalates: someone
 * who silenced it already knows, and an inhibited alert is muted on purpose (its cause is paging).
 * `GET /api/v2/alerts` with one equality matcher per label of the alert, written as Alertmanager
 * prints matchers (`formatMatcher`), then the alert picked out by fingerprint. Alertmanager evaluates
 * silences and inhibition afresh for each alert it lists.
 * Redirects are not followed (a 3xx is an error).
 * @see https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (getAlerts, alertStatus)
 */
import type { Alert } from './schema.js';
import { formatMatcher } from './matchers/match.js';
import { PipelineError } from '../core/errors.js';
import { redactedExcerpt } from '../core/secret.js';
import type { Endpoint } from '../core/endpoint.js';
import { alertmanagerRequest, AlertmanagerUnanswered } from './api.js';

/** An alert's `status` as API v2 reports it (`alertStatus`). */
export interface AlertStatus {
  state: 'active' | 'suppressed' | 'unprocessed';
  /** Ids of the silences muting it. */
  silencedBy: string[];
  /** Fingerprints of the alerts inhibiting it. */
  inhibitedBy: string[];
}

/** Thrown by {@link alertStatus}; the message quotes Alertmanager's reply briefly (secrets redacted). */
export class AlertStatusError extends PipelineError<'alertmanager_error'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'alertmanager_error', options);
    this.name = 'AlertStatusError';
  }
}

/** The alert as Alertmanager lists it: its status and when it ends on Alertmanager's clock (RFC 3339). */
export interface ListedAlert {
  status: AlertStatus;
  endsAt: string;
}

/**
 * @param alertmanager `ALERTMANAGER_URL` (base URL without trailing slash) and its credentials
 * @param alert the alert's `fingerprint` and labels, as the webhook carried them
 * @param timeoutMs request time-out, milliseconds
 * @returns its status, or `undefined` when Alertmanager does not list it (resolved or expired there)
 * @throws AlertStatusError as {@link listedAlert}
 */
export async function alertStatus(
  alertmanager: Endpoint,
  alert: Pick<Alert, 'fingerprint' | 'labels'>,
  timeoutMs: number,
): Promise<AlertStatus | undefined> {
  return (await listedAlert(alertmanager, alert, timeoutMs))?.status;
}

/**
 * The alert as Alertmanager lists it, in one `GET /api/v2/alerts`: whether it still fires there (listed,
 * `endsAt` ahead) and whether it is silenced or inhibited come from the same answer.
 * @param alertmanager `ALERTMANAGER_URL` (base URL without trailing slash) and its credentials
 * @param alert the alert's `fingerprint` and labels, as the webhook carried them
 * @param timeoutMs request time-out, milliseconds
 * @returns the listing, or `undefined` when Alertmanager does not list it (resolved or expired there)
 * @throws AlertStatusError when Alertmanager is unreachable, times out, redirects, refuses the credentials or answers
 *   anything but 200 with a list
 */
export async function listedAlert(
  alertmanager: Endpoint,
  alert: Pick<Alert, 'fingerprint' | 'labels'>,
  timeoutMs: number,
): Promise<ListedAlert | undefined> {
  const listed = await alertsLike(alertmanager, alert.labels, timeoutMs);
  const found = listed.find((a) => a.fingerprint === alert.fingerprint);
  if (!found) return undefined;
  const s = found.status ?? {};
  const ids = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const state = s.state === 'suppressed' || s.state === 'unprocessed' ? s.state : 'active';
  const endsAt = typeof found.endsAt === 'string' ? found.endsAt : '';
  return { status: { state, silencedBy: ids(s.silencedBy), inhibitedBy: ids(s.inhibitedBy) }, endsAt };
}

/** The alerts Alertmanager lists with every one of `labels` (one equality matcher each), as it answered them. */
async function alertsLike(
  alertmanager: Endpoint,
  labels: Record<string, string>,
  timeoutMs: number,
): Promise<{ fingerprint?: unknown; endsAt?: unknown; status?: Partial<AlertStatus> }[]> {
  const query = new URLSearchParams(
    Object.keys(labels)
      .sort()
      .map((name): [string, string] => ['filter', formatMatcher({ name, type: '=', value: labels[name] ?? '' })]),
  );
  let status: number;
  let text: string;
  try {
    ({ status, text } = await alertmanagerRequest(alertmanager, `/api/v2/alerts?${query}`, {
      method: 'GET',
      signal: AbortSignal.timeout(timeoutMs),
    }));
  } catch (err) {
    if (!(err instanceof AlertmanagerUnanswered)) throw err;
    throw new AlertStatusError(err.message, { cause: err });
  }
  if (status !== 200) throw new AlertStatusError(`Alertmanager answered HTTP ${status}: ${redactedExcerpt(text, 200)}`);
  let listed: unknown;
  try {
    listed = JSON.parse(text);
  } catch {
    listed = undefined;
  }
  if (!Array.isArray(listed)) throw new AlertStatusError('Alertmanager answered without a list of alerts');
  return listed;
}
