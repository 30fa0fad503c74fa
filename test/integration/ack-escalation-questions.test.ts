/**
 * The questions one escalation check asks Alertmanager: whether the alert still fires and whether it is
 * silenced or inhibited come from the same `GET /api/v2/alerts`, one per check, never two. Alertmanager
 * is a loopback stand-in answering its exact wire format (the real binary's answers:
 * ack-escalation-muted.test.ts and ack-escalation-over.test.ts), and counting the requests.
 */
import { describe, expect, it } from 'vitest';
import type { Alert } from '../../shared/alertmanager/schema.js';
import { checkEscalation } from '../../shared/escalation/escalation.js';
import type { Loopback } from '../helpers/loopback.js';
import { dynaliteSuite } from '../helpers/dynalite-suite.js';
import { escalationHarness } from './ack-harness.js';
import { critical, webhookFor } from './alertmanager-alerts.js';

const { db, loopback } = dynaliteSuite('ack-escalation-questions-0');

const json = (body: unknown) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/** Alertmanager listing `alert` as `GET /api/v2/alerts` does (its `endsAt` an hour ahead), with `status`. */
function alertmanager(
  alert: Pick<Alert, 'fingerprint' | 'labels'>,
  status: Record<string, unknown>,
): Promise<Loopback> {
  const at = new Date().toISOString();
  const endsAt = new Date(Date.now() + 3_600_000).toISOString();
  const annotations = {};
  return loopback(
    json([{ ...alert, annotations, receivers: [{ name: 'pipeline' }], startsAt: at, updatedAt: at, endsAt, status }]),
  );
}

/** Prometheus that never evaluated the alert: no `ALERTS` series now or since it started (its verdict `unknown`). */
const prometheusThatNeverSawIt = () =>
  loopback(json({ status: 'success', data: { resultType: 'vector', result: [] } }));

const ACTIVE = { state: 'active', silencedBy: [], inhibitedBy: [] };
const SILENCED = { state: 'suppressed', silencedBy: ['5f1c0a52-0d5e-4a57-9c1e-2b8f3d6e7a90'], inhibitedBy: [] };

describe('one escalation check asks Alertmanager once', () => {
  it.each([
    ['active, without Prometheus', ACTIVE, false, 'escalated'],
    ['silenced, without Prometheus', SILENCED, false, 'skipped'],
    ['active, with a Prometheus that never saw it', ACTIVE, true, 'escalated'],
    ['silenced, with a Prometheus that never saw it', SILENCED, true, 'skipped'],
  ] as const)('listed %s', async (name, status, withPrometheus, outcome) => {
    const startsAt = new Date().toISOString();
    const alert = { fingerprint: '0123456789abcdef', labels: critical(`one-question ${name}`) };
    const am = await alertmanager(alert, status);
    const prometheus = withPrometheus ? await prometheusThatNeverSawIt() : undefined;
    const target = await loopback();
    const h = await escalationHarness(db(), target, {
      ALERTMANAGER_URL: am.url,
      ...(prometheus && { PROMETHEUS_URL: prometheus.url }),
    });
    expect((await h.webhook(webhookFor(alert, startsAt))).status).toBe(200);

    expect(await checkEscalation({ fingerprint: alert.fingerprint, startsAt }, h.runtime.escalation!)).toBe(outcome);
    expect(am.requests.map((r) => `${r.method} ${new URL(r.path, am.url).pathname}`)).toEqual(['GET /api/v2/alerts']);
    expect(target.requests).toHaveLength(outcome === 'escalated' ? 1 : 0);
  });
});
