/**
 * The PagerDuty renderer on its output: the exact events a notification becomes, PagerDuty's field
 * limits, the `dedup_key` rule (stable across `startsAt` spellings, one per generation), severities,
 * and the storm, acknowledgement and escalation cases.
 */
import { describe, expect, it } from 'vitest';
import { alertDedupKey, groupDedupKey } from '../../../../shared/channels/pagerduty/dedup-key.js';
import { pagerDutySeverity } from '../../../../shared/channels/pagerduty/payload.js';
import { renderPagerDuty, type RenderedEvent } from '../../../../shared/channels/pagerduty/render.js';
import {
  PAGERDUTY_MAX_DEDUP_KEY_CHARS,
  PAGERDUTY_MAX_EVENT_BYTES,
  PAGERDUTY_MAX_SUMMARY_CHARS,
  type PagerDutyTrigger,
} from '../../../../shared/channels/pagerduty/wire.js';
import type { Enrichment } from '../../../../shared/enrich/types.js';
import type { Notification } from '../../../../shared/render/notification.js';
import { fixtureNotification, KV_CACHE_ENRICHMENT, stormNotification } from '../../../helpers/notifications.js';

const ACK_URL = 'https://ack.example.com/v1/ack/tok.en';
const WITH_CAUSE: Enrichment = {
  ...KV_CACHE_ENRICHMENT,
  likelyCause: {
    rule: 'kv_cache_pressure',
    cause: 'KV cache pressure: sequences are preempted',
    action: 'raise --gpu-memory-utilization',
    evidence: ['KV cache usage 97% (≥ 90%)', 'preemptions 1.2/s (> 0)'],
  },
} as Enrichment;

function kvCache(overrides: Partial<Notification> = {}): Notification {
  const n = fixtureNotification('firing-kv-cache-critical');
  return {
    ...n,
    acknowledgeUrl: ACK_URL,
    alerts: n.alerts.map((a) => ({ ...a, enrichment: WITH_CAUSE })),
    ...overrides,
  };
}
const triggers = (events: RenderedEvent[]) => events as Omit<PagerDutyTrigger, 'routing_key'>[];

describe('renderPagerDuty', () => {
  it('a firing alert: one trigger, exactly these fields', () => {
    const [event, ...rest] = triggers(renderPagerDuty(kvCache()));
    expect(rest).toEqual([]);
    expect(event).toEqual({
      event_action: 'trigger',
      dedup_key: '936e109b8c52c001/2026-11-29T12:42:23.143Z',
      payload: {
        summary: 'VLLMKVCacheNearlyFull: KV cache 97% full on qwen3-8b (qwen3-8b @ 127.0.0.1:9800)',
        source: '127.0.0.1:9800',
        component: 'qwen3-8b',
        group: 'vllm',
        class: 'VLLMKVCacheNearlyFull',
        severity: 'critical',
        timestamp: '2026-11-29T12:42:23.143Z',
        custom_details: {
          likely_cause: 'KV cache pressure: sequences are preempted',
          evidence: ['KV cache usage 97% (≥ 90%)', 'preemptions 1.2/s (> 0)'],
          try: 'raise --gpu-memory-utilization',
          signals: { 'KV cache usage': '97.3%', 'Waiting requests': '12', Preemptions: '1.2/s', 'TTFT p95': '850 ms' },
          started: '2026-11-29 12:42:23 UTC',
          fingerprint: '936e109b8c52c001',
          labels: {
            alertname: 'VLLMKVCacheNearlyFull',
            instance: '127.0.0.1:9800',
            job: 'vllm',
            kind: 'cache',
            model_name: 'qwen3-8b',
            severity: 'critical',
          },
          annotations: { summary: 'KV cache 97% full on qwen3-8b' },
        },
      },
      links: [
        { href: ACK_URL, text: 'Acknowledge' },
        {
          href: 'http://prometheus.example.com:9090/graph?g0.expr=vllm%3Agpu_cache_usage_perc+%3E+0.95&g0.tab=1',
          text: 'Graph',
        },
        {
          href: expect.stringMatching(/^http:\/\/alertmanager\.example\.com:9093\/#\/silences\/new\?filter=/),
          text: 'Silence',
        },
      ],
      client: 'llm-alert-pipeline',
      client_url: 'http://alertmanager.example.com:9093/',
    });
  });

  it('resolved alerts: one resolve each, keyed like their trigger', () => {
    const n = fixtureNotification('resolved-queue-backlog-two-models');
    const firing = fixtureNotification('firing-queue-backlog-two-models');
    expect(renderPagerDuty(n)).toEqual(n.alerts.map((a) => ({ event_action: 'resolve', dedup_key: alertDedupKey(a) })));
    expect(renderPagerDuty(n).map((e) => e.dedup_key)).toEqual(renderPagerDuty(firing).map((e) => e.dedup_key));
  });

  it('an acknowledged follow-up: one acknowledge per alert, with the generation of the re-fire it acknowledges', () => {
    const n = kvCache({ kind: 'acknowledged', generations: { '936e109b8c52c001': 2 } });
    expect(renderPagerDuty(n)).toEqual([
      { event_action: 'acknowledge', dedup_key: '936e109b8c52c001/2026-11-29T12:42:23.143Z/2' },
    ]);
  });

  it("an escalation is the alert's own trigger: deduplicated where PagerDuty has it, a page where it is a target only", () => {
    // The same dedup_key and payload as the routed trigger: PagerDuty adds it to the open alert's log.
    expect(renderPagerDuty(kvCache({ kind: 'escalation' }))).toEqual(renderPagerDuty(kvCache()));
    expect(triggers(renderPagerDuty(kvCache({ kind: 'escalation' })))).toHaveLength(1);
  });

  it('a re-fire (generation 1) is a new PagerDuty alert, said so in the summary and details', () => {
    const [event] = triggers(renderPagerDuty(kvCache({ generations: { '936e109b8c52c001': 1 } })));
    expect(event!.dedup_key).toBe('936e109b8c52c001/2026-11-29T12:42:23.143Z/1');
    expect(event!.payload.summary).toMatch(/^Firing again: VLLMKVCacheNearlyFull/);
    expect(event!.payload.custom_details?.firing_again).toMatch(/generation 1/);
  });

  it('a storm is one trigger for the group, then one resolve', () => {
    const storm = { ...stormNotification(120, 30), acknowledgeUrl: ACK_URL };
    const events = triggers(renderPagerDuty(storm));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      event_action: 'trigger',
      dedup_key: groupDedupKey(storm.groupKey),
      payload: {
        summary:
          'Alert storm: 150 alerts (120 firing) · GPUMemoryLeak, VLLMErrorRateHigh, VLLMKVCacheNearlyFull, VLLMQueueBacklog, VLLMTimeToFirstTokenHigh',
        severity: 'critical',
      },
      links: [{ href: ACK_URL, text: 'Acknowledge' }, { text: 'Silence' }],
    });
    expect(events[0]!.payload.custom_details?.firing_fingerprints).toHaveLength(100);
    const resolved = {
      ...storm,
      status: 'resolved' as const,
      alerts: storm.alerts.map((a) => ({ ...a, status: 'resolved' as const })),
    };
    expect(renderPagerDuty(resolved)).toEqual([{ event_action: 'resolve', dedup_key: groupDedupKey(storm.groupKey) }]);
    // A channel instance may digest earlier.
    expect(renderPagerDuty(stormNotification(11), { digestAbove: 10 })).toHaveLength(1);
    expect(renderPagerDuty(stormNotification(11))).toHaveLength(11);
  });

  it('keeps PagerDuty’s limits: summary 1,024 characters, dedup_key 255, event 512 KB', () => {
    const n = kvCache();
    const alert = n.alerts[0]!;
    const huge = {
      ...alert,
      fingerprint: 'f'.repeat(400),
      annotations: { summary: '🔥'.repeat(2000), description: 'x'.repeat(600_000) },
    };
    const [event] = triggers(renderPagerDuty({ ...n, alerts: [huge] }));
    expect(event!.payload.summary.length).toBeLessThanOrEqual(PAGERDUTY_MAX_SUMMARY_CHARS);
    expect(event!.payload.summary).toMatch(/…$/);
    expect(event!.dedup_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(event!.dedup_key.length).toBeLessThanOrEqual(PAGERDUTY_MAX_DEDUP_KEY_CHARS);
    expect(Buffer.byteLength(JSON.stringify({ routing_key: 'k'.repeat(32), ...event }))).toBeLessThanOrEqual(
      PAGERDUTY_MAX_EVENT_BYTES,
    );
    expect(event!.payload.custom_details).toMatchObject({
      likely_cause: expect.any(String),
      details_cut: expect.any(String),
    });
  });
});

describe('dedup keys', () => {
  it('are the same for every spelling of one startsAt, and differ by occurrence and generation', () => {
    const a = { fingerprint: '936e109b8c52c001', startsAt: '2026-11-29T12:42:23.143Z' };
    expect(alertDedupKey({ ...a, startsAt: '2026-11-29T12:42:23.143000000Z' })).toBe(alertDedupKey(a));
    expect(alertDedupKey({ ...a, startsAt: '2026-11-29T13:42:23.143+01:00' })).toBe(alertDedupKey(a));
    expect(alertDedupKey(a, 0)).toBe(alertDedupKey(a));
    expect(
      new Set([
        alertDedupKey(a),
        alertDedupKey(a, 1),
        alertDedupKey(a, 2),
        alertDedupKey({ ...a, startsAt: '2026-11-29T12:50:00Z' }),
      ]).size,
    ).toBe(4);
  });
});

describe('severity', () => {
  it.each([
    ['critical', 'critical'],
    ['Critical', 'critical'],
    ['page', 'critical'],
    ['P1', 'critical'],
    ['error', 'error'],
    ['high', 'error'],
    ['major', 'error'],
    ['warning', 'warning'],
    ['warn', 'warning'],
    ['minor', 'warning'],
    ['info', 'info'],
    ['low', 'info'],
    ['none', 'info'],
    ['', 'error'],
    [undefined, 'error'],
    ['bogus', 'error'],
  ] as const)('%s → %s', (label, expected) => {
    expect(pagerDutySeverity(label)).toBe(expected);
  });
});
