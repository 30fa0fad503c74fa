/**
 * One request to Alertmanager's API v2 (`ALERTMANAGER_URL`), with the credentials `ALERTMANAGER_*`
 * configure (`core/endpoint.ts`): the silences of "acknowledge and silence", the escalation's silence
 * check and the re-fire check all go through here. Redirects are not followed (a 3xx is an answer like
 * any other, which the callers refuse), and answers are read up to {@link MAX_ANSWER_BYTES}.
 * @see https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml
 */
import { endpointRequest, SigningError, type Endpoint } from '../core/endpoint.js';
import { networkErrorCode } from '../core/http-request.js';

/**
 * Largest answer read, bytes: a list of alerts under one `alertname` in a storm (thousands of alerts
 * at ~1 KB each) fits; beyond it the request fails as not answered usably.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** An answer that arrived: its HTTP status and body text. */
export interface ApiAnswer {
  status: number;
  text: string;
}

/** No answer: Alertmanager unreachable, too slow, cut off, or the request could not be signed. */
export class AlertmanagerUnanswered extends Error {
  /**
   * @param detail why, briefly: Node's network error code (`ECONNREFUSED`), `TimeoutError`, or the signing problem
   * @param unsigned the request was never sent: SigV4 found no AWS credentials
   */
  constructor(
    readonly detail: string,
    readonly unsigned: boolean,
    options?: { cause?: unknown },
  ) {
    super(unsigned ? `ALERTMANAGER_SIGV4_REGION: ${detail}` : `Alertmanager did not answer (${detail})`, options);
    this.name = 'AlertmanagerUnanswered';
  }
}

/**
 * @param endpoint `ALERTMANAGER_URL` and its credentials
 * @param pathAndQuery e.g. `/api/v2/silences`
 * @param init `method`, a JSON `body` for POST, and the time-out of the whole request (milliseconds), or a
 *   `signal` that bounds it
 * @throws AlertmanagerUnanswered `Alertmanager did not answer (ECONNREFUSED)` (or `TimeoutError`, a cut-off
 *   answer's code, a body over {@link MAX_ANSWER_BYTES}), or `ALERTMANAGER_SIGV4_REGION: no AWS credentials…`
 */
export async function alertmanagerRequest(
  endpoint: Endpoint,
  pathAndQuery: string,
  init: { method: 'GET' | 'POST'; body?: unknown; signal: AbortSignal },
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const answer = await endpointRequest(endpoint, pathAndQuery, {
      method: init.method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: init.signal,
    });
    return { status: answer.status, text: await answer.text(MAX_ANSWER_BYTES) };
  } catch (err) {
    if (err instanceof SigningError) throw new AlertmanagerUnanswered(err.message, true, { cause: err });
    const reason = init.signal.aborted ? ((init.signal.reason as Error)?.name ?? 'AbortError') : networkErrorCode(err);
    throw new AlertmanagerUnanswered(reason, false, { cause: err });
  }
}
