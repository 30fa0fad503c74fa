/**
 * Alertmanager as the source of truth: `GET /api/v2/alerts` lists the alerts it holds that have not
 * resolved (active, silenced, inhibited or not yet processed). An alert listed with our `fingerprint`
 * and an `endsAt` still ahead fires; one not listed has resolved. One request per `alertname`.
 *
 * Weaker than Prometheus: after a resolve by a missed resend, Alertmanager believes the alert resolved
 * until Prometheus sends it again; by the time that firing reaches us it lists it again.
 * @see https://github.com/prometheus/alertmanager/blob/main/api/v2/openapi.yaml (getAlerts)
 */
import * as z from '../core/zod.js';
import type { Alert } from '../alertmanager/schema.js';
import { quoteString } from '../prometheus/promql.js';
import { allUnknown, byAlertname, type AlertStateSource, type Verdict } from './types.js';

const gettableAlerts = z.array(z.object({ fingerprint: z.string(), endsAt: z.string() }));

/**
 * @param alertmanagerUrl base URL without trailing slash (`ALERTMANAGER_URL`)
 * @param timeoutMs per request, milliseconds
 * @param now clock, epoch milliseconds
 */
export function alertmanagerAlertState(alertmanagerUrl: string, timeoutMs: number, now: () => number = Date.now): AlertStateSource {
  return {
    async statesOf(alerts, signal) {
      const verdicts = new Map<string, Verdict>();
      await Promise.all(
        [...byAlertname(alerts)].map(async ([name, group]) => {
          for (const [fp, v] of await statesOfName(alertmanagerUrl, name, group, AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]), now())) verdicts.set(fp, v);
        }),
      );
      return verdicts;
    },
  };
}

async function statesOfName(baseUrl: string, name: string, alerts: Alert[], signal: AbortSignal, nowMs: number): Promise<Map<string, Verdict>> {
  if (!name) return allUnknown(alerts, 'alertmanager', 'alert has no alertname');
  const url = `${baseUrl}/api/v2/alerts?${new URLSearchParams({ filter: `alertname=${quoteString(name)}` })}`;
  let listed: z.infer<typeof gettableAlerts>;
  try {
    const response = await fetch(url, { signal, redirect: 'manual', headers: { accept: 'application/json' } });
    if (response.status !== 200) return allUnknown(alerts, 'alertmanager', `Alertmanager answered HTTP ${response.status}`);
    const parsed = gettableAlerts.safeParse(await response.json());
    if (!parsed.success) return allUnknown(alerts, 'alertmanager', `Alertmanager did not answer usably (not its alerts list: ${firstIssue(parsed.error.issues)})`);
    listed = parsed.data;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).name;
    return allUnknown(alerts, 'alertmanager', `Alertmanager did not answer usably (${cause})`);
  }
  const active = new Set(listed.filter((a) => !(Date.parse(a.endsAt) <= nowMs)).map((a) => a.fingerprint));
  return new Map(alerts.map((a) => [a.fingerprint, { state: active.has(a.fingerprint) ? 'firing' : 'resolved', source: 'alertmanager' }]));
}

/** The first problem zod found in an answer, as `path: message` (e.g. `0.fingerprint: Invalid input: expected string, received number`). */
function firstIssue(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  const issue = issues[0];
  if (!issue) return 'unexpected body';
  return issue.path.length ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message;
}
