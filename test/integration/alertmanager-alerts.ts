/**
 * Alerts in a real Alertmanager for the escalation tests: pushed as Prometheus pushes them
 * (`POST /api/v2/alerts`), read back with the fingerprint Alertmanager gave them, and the webhook body
 * Alertmanager would send for them.
 */
import { expect } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { formatMatcher } from '../../shared/alertmanager/matchers/index.js';
import { fixture } from '../helpers/fixtures.js';
import { pollUntil } from '../helpers/processes.js';

const POLL = { deadlineMs: 15_000, intervalMs: 100 };

/** Labels of a critical KV-cache alert for `model` (each test its own model, so silences do not meet). */
export const critical = (model: string, extra: Record<string, string> = {}) => ({
  ...fixture('firing-kv-cache-critical').alerts[0]!.labels,
  model_name: model,
  ...extra,
});

/** What Alertmanager lists of the alert with exactly `labels`, if it does. */
export async function listed(
  alertmanagerUrl: string,
  labels: Record<string, string>,
): Promise<Pick<Alert, 'fingerprint' | 'labels'> | undefined> {
  const query = new URLSearchParams(
    Object.entries(labels).map(([k, v]): [string, string] => [
      'filter',
      formatMatcher({ name: k, type: '=', value: v }),
    ]),
  );
  const alerts = (await (await fetch(`${alertmanagerUrl}/api/v2/alerts?${query}`)).json()) as {
    fingerprint: string;
    labels: Record<string, string>;
  }[];
  const same = (l: Record<string, string>) => JSON.stringify(Object.entries(l).sort());
  return alerts.find((a) => same(a.labels) === same(labels));
}

/**
 * Pushes an alert as Prometheus does (firing; resolved when `endsAt` is given and past).
 * @returns the alert as Alertmanager lists it (with its fingerprint); for a resolve, once it is no longer listed
 */
export async function push(
  alertmanagerUrl: string,
  labels: Record<string, string>,
  times: { startsAt: string; endsAt?: string },
): Promise<Pick<Alert, 'fingerprint' | 'labels'>> {
  const before = times.endsAt ? await listed(alertmanagerUrl, labels) : undefined;
  const res = await fetch(`${alertmanagerUrl}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([{ labels, annotations: { summary: `test alert for ${labels.model_name}` }, ...times }]),
    signal: AbortSignal.timeout(5000),
  });
  expect(res.status).toBe(200);
  if (times.endsAt) {
    if (!before) throw new Error(`alert ${JSON.stringify(labels)} was not listed before its resolve`);
    await pollUntil(
      async () => ((await listed(alertmanagerUrl, labels)) ? undefined : true),
      () => `alert ${JSON.stringify(labels)} still listed after its resolve`,
      POLL,
    );
    return before;
  }
  return pollUntil(
    () => listed(alertmanagerUrl, labels),
    () => `alert ${JSON.stringify(labels)} not listed`,
    POLL,
  );
}

/** The webhook Alertmanager would send for `alert`. */
export function webhookFor(alert: Pick<Alert, 'fingerprint' | 'labels'>, startsAt: string) {
  const body = fixture('firing-kv-cache-critical');
  body.alerts = [{ ...body.alerts[0]!, labels: alert.labels, fingerprint: alert.fingerprint, startsAt }];
  body.commonLabels = alert.labels;
  body.groupKey = `{}:{alertname="VLLMKVCacheNearlyFull", model_name=${JSON.stringify(alert.labels.model_name)}}`;
  return body;
}
