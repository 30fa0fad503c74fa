/**
 * Escalation of an alert that is already over: Alertmanager holds a resolve until its next
 * `group_interval` flush, so an alert can recover minutes before its escalation comes due while the
 * pipeline still has it firing. Before escalating, the check asks the sources of truth the re-fire rule
 * asks (Prometheus's `ALERTS` first, then Alertmanager's alerts): "not firing" or "not listed" means
 * over, and the alert is not escalated (the history says who said so). Only when no source is
 * configured, or none answers, it escalates, and the history says it could not be checked.
 * Alertmanager is the real one (Debian package); Prometheus a loopback stand-in answering its exact
 * wire format (the real binary's `ALERTS`: test/e2e/refire.e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { checkEscalation } from '../../shared/escalation/escalation.js';
import type { Loopback, RecordedRequest } from '../helpers/loopback.js';
import { dynaliteSuite } from '../helpers/dynalite-suite.js';
import { freePort, startAlertmanager, type RunningProcess } from '../helpers/processes.js';
import { auditOf as audit, escalationHarness, type AckHarness } from './ack-harness.js';
import { critical, push, webhookFor } from './alertmanager-alerts.js';

const { db, loopback } = dynaliteSuite('ack-escalation-over-0');
let alertmanager: RunningProcess;

beforeAll(async () => {
  alertmanager = await startAlertmanager({ webhookUrl: `http://127.0.0.1:${await freePort()}/v1/alertmanager` });
}, 60_000);
afterAll(async () => {
  await alertmanager?.stop();
});

/** A Prometheus stand-in whose `ALERTS` series of `labels` fires now (`now`) and/or fired since it started (`seen`). */
function prometheus(labels: Record<string, string>, state: { now: boolean; seen: boolean }): Promise<Loopback> {
  return loopback((r: RecordedRequest) => {
    const query = new URL(r.path, 'http://x').searchParams.get('query') ?? '';
    const overTime = query.startsWith('max_over_time(');
    const series = overTime ? labels : { __name__: 'ALERTS', alertstate: 'firing', ...labels };
    const result = (overTime ? state.seen : state.now) ? [{ metric: series, value: [Date.now() / 1000, '1'] }] : [];
    return {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }),
    };
  });
}

async function harness(env: Record<string, string>): Promise<{ h: AckHarness; target: Loopback }> {
  const target = await loopback();
  return { h: await escalationHarness(db(), target, env), target };
}

/** Notifies `alert` firing and runs its escalation check. */
async function escalate(h: AckHarness, alert: Pick<Alert, 'fingerprint' | 'labels'>, startsAt: string) {
  expect((await h.webhook(webhookFor(alert, startsAt))).status).toBe(200);
  expect(h.runtime.timers!.pending()).toHaveLength(1);
  return checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!);
}

describe('escalation of an alert that is already over', () => {
  it('is not sent when Alertmanager no longer lists it (its resolve not yet flushed to us)', async () => {
    const startsAt = new Date().toISOString();
    const labels = critical('over-in-alertmanager');
    const alert = await push(alertmanager.url, labels, { startsAt });
    const { h, target } = await harness({ ALERTMANAGER_URL: alertmanager.url });
    expect((await h.webhook(webhookFor(alert, startsAt))).status).toBe(200);
    // Prometheus sends the resolve; Alertmanager holds it until the group's next flush.
    await push(alertmanager.url, labels, { startsAt, endsAt: new Date().toISOString() });

    expect(await checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
    const state = await audit(h, alert.fingerprint);
    expect(state.record.escalation).toMatchObject({ state: 'cancelled', reason: 'resolved' });
    expect(state.history.map((e) => e.type)).toEqual(['notified', 'escalation scheduled', 'escalation cancelled']);
    expect(state.history[2]).toMatchObject({ reason: 'resolved', source: 'alertmanager' });
    // A retry of the same schedule finds nothing to do.
    expect(await checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
  });

  it('is not sent when Prometheus has no firing ALERTS series of it, though Alertmanager still lists it', async () => {
    const startsAt = new Date().toISOString();
    const labels = critical('over-in-prometheus');
    const alert = await push(alertmanager.url, labels, { startsAt });
    const prom = await prometheus(labels, { now: false, seen: true });
    const { h, target } = await harness({ PROMETHEUS_URL: prom.url, ALERTMANAGER_URL: alertmanager.url });

    expect(await escalate(h, alert, startsAt)).toBe('skipped');
    expect(target.requests).toHaveLength(0);
    expect(prom.requests.length).toBeGreaterThan(0);
    const state = await audit(h, alert.fingerprint);
    expect(state.record.escalation).toMatchObject({ state: 'cancelled', reason: 'resolved' });
    expect(state.history[2]).toMatchObject({ type: 'escalation cancelled', reason: 'resolved', source: 'prometheus' });
  });

  it('is sent when the source says it fires, and the history says which source', async () => {
    const startsAt = new Date().toISOString();
    const labels = critical('still-firing');
    const alert = await push(alertmanager.url, labels, { startsAt });
    const prom = await prometheus(labels, { now: true, seen: true });
    const { h, target } = await harness({ PROMETHEUS_URL: prom.url, ALERTMANAGER_URL: alertmanager.url });

    expect(await escalate(h, alert, startsAt)).toBe('escalated');
    expect(target.requests).toHaveLength(1);
    const state = await audit(h, alert.fingerprint);
    expect(state.history[2]).toMatchObject({ type: 'escalated', verdict: 'firing', source: 'prometheus' });
  });

  it('is sent when no source of truth is configured, and the history says it was not checked', async () => {
    const startsAt = new Date().toISOString();
    const alert = { fingerprint: '1111222233334444', labels: critical('no-source') };
    const { h, target } = await harness({});

    expect(await escalate(h, alert, startsAt)).toBe('escalated');
    expect(target.requests).toHaveLength(1);
    expect((await audit(h, alert.fingerprint)).history[2]).toMatchObject({
      type: 'escalated',
      verdict: 'unknown',
      source: 'none',
      verdictReason: expect.stringMatching(/no source of truth configured/),
    });
  });

  it('is sent when no source answers (paging once too often beats missing a page)', async () => {
    const startsAt = new Date().toISOString();
    const alert = { fingerprint: '5555666677778888', labels: critical('no-answer') };
    const down = `http://127.0.0.1:${await freePort()}`;
    const { h, target } = await harness({ PROMETHEUS_URL: down, ALERTMANAGER_URL: down });

    expect(await escalate(h, alert, startsAt)).toBe('escalated');
    expect(target.requests).toHaveLength(1);
    expect((await audit(h, alert.fingerprint)).history[2]).toMatchObject({
      type: 'escalated',
      verdict: 'unknown',
      verdictReason: expect.stringMatching(/Prometheus query failed/),
    });
  });
});
