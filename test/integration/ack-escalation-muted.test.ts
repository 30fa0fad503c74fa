/**
 * Escalation checks Alertmanager first (`ALERTMANAGER_URL` set), against the real Alertmanager
 * (Debian package): an alert silenced there, or inhibited by an inhibit rule of its configuration, is
 * not escalated when the check runs, and the history says why and by what. An alert Alertmanager lists
 * as active, or an Alertmanager that does not answer, escalates as before. The alerts are pushed to
 * Alertmanager as Prometheus does, and the webhook carries the fingerprints Alertmanager gave them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { checkEscalation } from '../../shared/escalation/escalation.js';
import { createSilence, silenceFor } from '../../shared/alertmanager/silences.js';
import { alertStatus, AlertStatusError } from '../../shared/alertmanager/alert-status.js';
import { startLoopback, type Loopback } from '../helpers/loopback.js';
import { dynaliteSuite } from '../helpers/dynalite-suite.js';
import { freePort, pollUntil, startAlertmanager, type RunningProcess } from '../helpers/processes.js';
import { auditOf as audit, escalationHarness, type AckHarness } from './ack-harness.js';
import { critical, push as pushTo, webhookFor } from './alertmanager-alerts.js';

const POLL = { deadlineMs: 15_000, intervalMs: 100 };
/** Maintenance of a model mutes its critical alerts (the test configuration's inhibit rule). */
const INHIBIT_RULE = {
  source_matchers: ['alertname="ModelMaintenance"'],
  target_matchers: ['severity="critical"'],
  equal: ['model_name'],
};

const { db, loopback } = dynaliteSuite('ack-escalation-muted-0');
let alertmanager: RunningProcess;
let target: Loopback;

beforeAll(async () => {
  alertmanager = await startAlertmanager({
    webhookUrl: `http://127.0.0.1:${await freePort()}/v1/alertmanager`,
    inhibitRules: [INHIBIT_RULE],
  });
}, 60_000);
afterAll(async () => {
  await alertmanager?.stop();
});
const push = (labels: Record<string, string>, startsAt: string) => pushTo(alertmanager.url, labels, { startsAt });

async function harness(alertmanagerUrl = alertmanager.url): Promise<AckHarness> {
  target = await loopback();
  return escalationHarness(db(), target, { ALERTMANAGER_URL: alertmanagerUrl });
}

async function waitSuppressed(alert: Pick<Alert, 'fingerprint' | 'labels'>, by: 'silencedBy' | 'inhibitedBy') {
  return pollUntil(
    async () => {
      const status = await alertStatus(alertmanager, alert, 5000);
      return status?.state === 'suppressed' && status[by].length ? status : undefined;
    },
    () => `${alert.fingerprint} not ${by}:\n${alertmanager.output().slice(-2000)}`,
    POLL,
  );
}

describe('escalation of an alert muted in Alertmanager', () => {
  it('is not sent when Alertmanager reports the alert silenced; the history names the silence', async () => {
    const startsAt = new Date().toISOString();
    // Label values Alertmanager's matcher syntax must escape: a quote, a backslash, a newline.
    const alert = await push(critical('muted-by-silence', { path: 'C:\\models\\"qwen"\nv2' }), startsAt);
    const silenceId = await createSilence(
      alertmanager,
      silenceFor(alert, { hours: 1, by: 'oncall', nowMs: Date.now() }),
      5000,
    );
    await waitSuppressed(alert, 'silencedBy');
    const h = await harness();
    expect((await h.webhook(webhookFor(alert, startsAt))).status).toBe(200);
    expect(h.runtime.timers!.pending()).toHaveLength(1);

    expect(await checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
    const state = await audit(h, alert.fingerprint);
    expect(state.record.escalation).toMatchObject({ state: 'cancelled', reason: 'silenced' });
    expect(state.history.map((e) => e.type)).toEqual(['notified', 'escalation scheduled', 'escalation cancelled']);
    expect(state.history[2]).toMatchObject({ reason: 'silenced', silencedBy: [silenceId], inhibitedBy: [] });
    // A second run of the same schedule (a retry) finds nothing to do.
    expect(await checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
  });

  it('is not sent when an inhibit rule mutes the alert; the history names the inhibiting alert', async () => {
    const startsAt = new Date().toISOString();
    const source = await push(
      { alertname: 'ModelMaintenance', model_name: 'muted-by-inhibition', severity: 'info' },
      startsAt,
    );
    const alert = await push(critical('muted-by-inhibition'), startsAt);
    await waitSuppressed(alert, 'inhibitedBy');
    const h = await harness();
    await h.webhook(webhookFor(alert, startsAt));

    expect(await checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
    const state = await audit(h, alert.fingerprint);
    expect(state.record.escalation).toMatchObject({ state: 'cancelled', reason: 'inhibited' });
    expect(state.history[2]).toMatchObject({
      type: 'escalation cancelled',
      reason: 'inhibited',
      silencedBy: [],
      inhibitedBy: [source.fingerprint],
    });
  });

  it('is sent when Alertmanager lists the alert as active', async () => {
    const startsAt = new Date().toISOString();
    const alert = await push(critical('not-muted'), startsAt);
    const h = await harness();
    await h.webhook(webhookFor(alert, startsAt));
    expect(await checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!)).toBe(
      'escalated',
    );
    expect(target.requests).toHaveLength(1);
    expect((await audit(h, alert.fingerprint)).history.map((e) => e.type)).toEqual([
      'notified',
      'escalation scheduled',
      'escalated',
    ]);
  });

  it('is sent when Alertmanager does not answer (paging once too often beats missing a page)', async () => {
    const startsAt = new Date().toISOString();
    const h = await harness(`http://127.0.0.1:${await freePort()}`);
    const alert = { fingerprint: 'aaaabbbbccccdddd', labels: critical('am-down') };
    await h.webhook(webhookFor(alert, startsAt));
    expect(await checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!)).toBe(
      'escalated',
    );
    expect(target.requests).toHaveLength(1);
  });

  it('does not follow a redirect from Alertmanager: a 3xx is an error, the redirect target is never asked', async () => {
    const elsewhere = await startLoopback({ status: 200, body: '[]' });
    const redirecting = await startLoopback({ status: 302, headers: { location: `${elsewhere.url}/api/v2/alerts` } });
    try {
      const err = await alertStatus(redirecting, { fingerprint: 'f', labels: { alertname: 'A' } }, 5000).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AlertStatusError);
      expect((err as Error).message).toMatch(/^Alertmanager answered HTTP 302/);
      expect(redirecting.requests[0]!.path).toBe(`/api/v2/alerts?filter=${encodeURIComponent('alertname="A"')}`);
      expect(elsewhere.requests).toHaveLength(0);
    } finally {
      await Promise.all([elsewhere.close(), redirecting.close()]);
    }
  });
});
