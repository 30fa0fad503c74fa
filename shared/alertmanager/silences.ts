/**
 * Creates Alertmanager silences through its API v2 (`POST /api/v2/silences`), for "acknowledge and
 * silence for N hours". One silence per alert, matching every label of the alert with equality
 * matchers: the labels are what identifies an alert (its fingerprint is their hash), so the silence
 * mutes that alert and nothing broader.
 * @see https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (postSilences)
 */
import type { Alert } from './schema.js';
import { PipelineError } from '../core/errors.js';
import { redactedExcerpt } from '../core/secret.js';
import type { Endpoint } from '../core/endpoint.js';
import { alertmanagerRequest, AlertmanagerUnanswered } from './api.js';

/** The silence durations the page offers, hours. */
export const SILENCE_HOURS = [1, 4, 8, 24] as const;

/** A matcher as API v2 takes it; `isEqual: false` would mean `!=`. */
export interface SilenceMatcher {
  name: string;
  value: string;
  isRegex: boolean;
  isEqual: true;
}

/** The body of `POST /api/v2/silences` (a `postableSilence` without `id`). */
export interface PostableSilence {
  matchers: SilenceMatcher[];
  /** RFC 3339. */
  startsAt: string;
  /** RFC 3339. */
  endsAt: string;
  createdBy: string;
  comment: string;
}

/** Thrown by {@link createSilence}; the message quotes Alertmanager's reply (secrets redacted). */
export class SilenceError extends PipelineError<'alertmanager_error'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'alertmanager_error', options);
    this.name = 'SilenceError';
  }
}

/**
 * The silence for one alert: equality matchers on all its labels (sorted by name), from `nowMs` for `hours`.
 * @param nowMs epoch milliseconds
 */
export function silenceFor(
  alert: Pick<Alert, 'labels' | 'fingerprint'>,
  options: { hours: number; by: string; nowMs: number; link?: string },
): PostableSilence {
  const matchers = Object.keys(alert.labels)
    .sort()
    .map((name): SilenceMatcher => ({ name, value: alert.labels[name] ?? '', isRegex: false, isEqual: true }));
  const comment = `Acknowledged by ${options.by} via llm-alert-pipeline (alert ${alert.fingerprint})`;
  return {
    matchers,
    startsAt: new Date(options.nowMs).toISOString(),
    endsAt: new Date(options.nowMs + options.hours * 3_600_000).toISOString(),
    createdBy: options.by,
    comment: options.link ? `${comment}: ${options.link}` : comment,
  };
}

/**
 * Posts a silence.
 * @param alertmanager `ALERTMANAGER_URL` (base URL without trailing slash) and its credentials
 * @param timeoutMs request time-out, milliseconds
 * @returns the new silence's id (`silenceID`)
 * @throws SilenceError when Alertmanager is unreachable, times out, refuses the credentials or answers anything but
 *   200 with an id (the message quotes its answer briefly, secrets redacted)
 */
export async function createSilence(
  alertmanager: Endpoint,
  silence: PostableSilence,
  timeoutMs: number,
): Promise<string> {
  let answer: { status: number; text: string };
  try {
    answer = await alertmanagerRequest(alertmanager, '/api/v2/silences', {
      method: 'POST',
      body: silence,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    if (!(err instanceof AlertmanagerUnanswered)) throw err;
    throw new SilenceError(err.message, { cause: err });
  }
  if (answer.status !== 200)
    throw new SilenceError(`Alertmanager answered HTTP ${answer.status}: ${redactedExcerpt(answer.text, 200)}`);
  let id: unknown;
  try {
    id = (JSON.parse(answer.text) as { silenceID?: unknown }).silenceID;
  } catch {
    id = undefined;
  }
  if (typeof id !== 'string' || !id) throw new SilenceError('Alertmanager answered without a silenceID');
  return id;
}
