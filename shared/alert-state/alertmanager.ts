/**
 * Alertmanager as the source of truth: `GET /api/v2/alerts` lists the alerts it holds that have not
 * resolved (active, silenced, inhibited or not yet processed). An alert listed with our `fingerprint`
 * and an `endsAt` still ahead (allowing {@link SENDER_CLOCK_SKEW_MS} of skew between its clock and ours)
 * fires; one not listed has resolved. One request per `alertname`.
 *
 * Weaker than Prometheus: after a resolve by a missed resend, Alertmanager believes the alert resolved
 * until Prometheus sends it again; by the time that firing reaches us it lists it again.
 * @see https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (getAlerts)
 */
import * as z from '../core/zod.js';
import { SENDER_CLOCK_SKEW_MS, type Alert } from '../alertmanager/schema.js';
import { quoteString } from '../prometheus/promql.js';
import { allUnknown, byAlertname, type AlertStateSource, type Verdict } from './types.js';
import type { Endpoint } from '../core/endpoint.js';
import { alertmanagerRequest, AlertmanagerUnanswered } from '../alertmanager/api.js';

const gettableAlerts = z.array(z.object({ fingerprint: z.string(), endsAt: z.string() }));

/**
 * @param alertmanager `ALERTMANAGER_URL` (base URL without trailing slash) and its credentials
 * @param timeoutMs per request, milliseconds
 * @param now clock, epoch milliseconds
 */
export function alertmanagerAlertState(
  alertmanager: Endpoint,
  timeoutMs: number,
  now: () => number = Date.now,
): AlertStateSource {
  return {
    async statesOf(alerts, signal) {
      const verdicts = new Map<string, Verdict>();
      await Promise.all(
        [...byAlertname(alerts)].map(async ([name, group]) => {
          const question = {
            alertmanager,
            signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
            nowMs: now(),
          };
          for (const [fp, v] of await statesOfName(name, group, question)) verdicts.set(fp, v);
        }),
      );
      return verdicts;
    },
  };
}

/** What one question about the alerts of one `alertname` needs: where to ask, its budget, the time now (epoch ms). */
interface Question {
  alertmanager: Endpoint;
  signal: AbortSignal;
  nowMs: number;
}

/** The verdicts of the alerts of `name`, from one `GET /api/v2/alerts?filter=alertname="…"`. */
async function statesOfName(
  name: string,
  alerts: Alert[],
  { alertmanager, signal, nowMs }: Question,
): Promise<Map<string, Verdict>> {
  if (!name) return allUnknown(alerts, 'alertmanager', 'alert has no alertname');
  const path = `/api/v2/alerts?${new URLSearchParams({ filter: `alertname=${quoteString(name)}` })}`;
  let listed: z.infer<typeof gettableAlerts>;
  try {
    const answer = await alertmanagerRequest(alertmanager, path, { method: 'GET', signal });
    if (answer.status !== 200) return allUnknown(alerts, 'alertmanager', `Alertmanager answered HTTP ${answer.status}`);
    const parsed = gettableAlerts.safeParse(JSON.parse(answer.text));
    if (!parsed.success)
      return allUnknown(
        alerts,
        'alertmanager',
        `Alertmanager did not answer usably (not its alerts list: ${firstIssue(parsed.error.issues)})`,
      );
    listed = parsed.data;
  } catch (err) {
    if (err instanceof AlertmanagerUnanswered && err.unsigned) return allUnknown(alerts, 'alertmanager', err.message);
    const cause = err instanceof AlertmanagerUnanswered ? err.detail : (err as Error).name;
    return allUnknown(alerts, 'alertmanager', `Alertmanager did not answer usably (${cause})`);
  }
  const active = new Set(listed.filter((a) => listedAsFiring(a.endsAt, nowMs)).map((a) => a.fingerprint));
  return new Map(
    alerts.map((a) => [
      a.fingerprint,
      { state: active.has(a.fingerprint) ? 'firing' : 'resolved', source: 'alertmanager' },
    ]),
  );
}

/**
 * Whether an alert Alertmanager lists still fires: its `endsAt` (RFC 3339, Alertmanager's clock) is not
 * past. Alertmanager lists only alerts whose `endsAt` is ahead on its own clock; ours may be ahead of it
 * by up to {@link SENDER_CLOCK_SKEW_MS}.
 * @param nowMs our clock, epoch milliseconds
 */
export function listedAsFiring(endsAt: string, nowMs: number): boolean {
  return !(Date.parse(endsAt) <= nowMs - SENDER_CLOCK_SKEW_MS);
}

/** The first problem zod found in an answer, as `path: message` (e.g. `0.fingerprint: Invalid input: expected string, received number`). */
function firstIssue(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const issue = issues[0];
  if (!issue) return 'unexpected body';
  return issue.path.length ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message;
}
