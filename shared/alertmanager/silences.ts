/**
 * Creates Alertmanager silences through its API v2 (`POST /api/v2/silences`), for "acknowledge and
 * silence for N hours". One silence per alert, matching every label of the alert with equality
 * matchers: the labels are what identifies an alert (its fingerprint is their hash), so the silence
 * mutes that alert and nothing broader.
 * @see https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (postSilences)
 */
import type { Alert } from './schema.js';

/** The silence durations the page offers, hours. */
export const SILENCE_HOURS = [1, 4, 8, 24] as const;

/** A matcher as API v2 takes it; `isEqual: false` would mean `!=`. */
export interface SilenceMatcher {
  name: string;
  value: string;
  isRegex: false;
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

/** Thrown by {@link createSilence}; the message quotes Alertmanager's reply (no secrets are involved). */
export class SilenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SilenceError';
  }
}

/**
 * The silence for one alert: equality matchers on all its labels (sorted by name), from `nowMs` for `hours`.
 * @param nowMs epoch milliseconds
 */
export function silenceFor(alert: Pick<Alert, 'labels' | 'fingerprint'>, options: { hours: number; by: string; nowMs: number; link?: string }): PostableSilence {
  const matchers = Object.keys(alert.labels).sort().map((name): SilenceMatcher => ({ name, value: alert.labels[name] ?? '', isRegex: false, isEqual: true }));
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
 * @param alertmanagerUrl base URL without trailing slash (`ALERTMANAGER_URL`)
 * @param timeoutMs request time-out, milliseconds
 * @returns the new silence's id (`silenceID`)
 * @throws SilenceError when Alertmanager is unreachable, times out or answers anything but 200 with an id
 */
export async function createSilence(alertmanagerUrl: string, silence: PostableSilence, timeoutMs: number): Promise<string> {
  let response: Response;
  try {
    response = await fetch(`${alertmanagerUrl}/api/v2/silences`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(silence),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    throw new SilenceError(`Alertmanager did not answer (${cause})`);
  }
  const text = await response.text().catch(() => '');
  if (response.status !== 200) throw new SilenceError(`Alertmanager answered HTTP ${response.status}: ${text.replace(/\s+/g, ' ').trim().slice(0, 200)}`);
  let id: unknown;
  try {
    id = (JSON.parse(text) as { silenceID?: unknown }).silenceID;
  } catch {
    id = undefined;
  }
  if (typeof id !== 'string' || !id) throw new SilenceError('Alertmanager answered without a silenceID');
  return id;
}
