import { afterEach, describe, expect, it, vi } from 'vitest';
import { emfMetrics, NOTIFICATIONS_FAILED } from '../../../shared/metrics/emf.js';

interface Emf {
  _aws: {
    CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[];
  };
  [key: string]: unknown;
}

/** The EMF lines written to stdout while `fn` runs. */
function emitted(fn: () => void): Emf[] {
  const lines: Emf[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    for (const line of String(chunk).split('\n')) if (line.startsWith('{"_aws"')) lines.push(JSON.parse(line) as Emf);
    return true;
  });
  try {
    fn();
  } finally {
    write.mockRestore();
  }
  return lines;
}

const shape = ({ _aws, ...fields }: Emf) => {
  const { Timestamp: _t, CloudWatchMetrics } = _aws as Emf['_aws'] & { Timestamp: number };
  return { ...CloudWatchMetrics[0], fields };
};

describe('emfMetrics (one EMF line per recording)', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes each recording with its own dimensions only, however many came before', () => {
    const metrics = emfMetrics('Test');
    const lines = emitted(() => {
      metrics.inc('notifications_total', { channel: 'slack', outcome: 'failed', reason: '' });
      metrics.observe('enrichment_duration_seconds', {}, 0.25);
      metrics.set('heartbeat_missing', { alertmanager: 'am-1' }, 1);
    });
    expect(lines.map(shape)).toEqual([
      {
        Namespace: 'Test',
        Dimensions: [['channel', 'outcome'], []],
        Metrics: [{ Name: 'llm_alert_pipeline_notifications_total', Unit: 'Count' }],
        fields: { channel: 'slack', outcome: 'failed', llm_alert_pipeline_notifications_total: 1 },
      },
      {
        Namespace: 'Test',
        Dimensions: [[]],
        Metrics: [{ Name: NOTIFICATIONS_FAILED, Unit: 'Count' }],
        fields: { [NOTIFICATIONS_FAILED]: 1 },
      },
      {
        Namespace: 'Test',
        Dimensions: [[]],
        Metrics: [{ Name: 'llm_alert_pipeline_enrichment_duration_seconds', Unit: 'Seconds' }],
        fields: { llm_alert_pipeline_enrichment_duration_seconds: 0.25 },
      },
      {
        Namespace: 'Test',
        Dimensions: [['alertmanager'], []],
        Metrics: [{ Name: 'llm_alert_pipeline_heartbeat_missing', Unit: 'None' }],
        fields: { alertmanager: 'am-1', llm_alert_pipeline_heartbeat_missing: 1 },
      },
    ]);
  });

  it('drops a recording Powertools refuses without failing, and without leaving its dimensions to the next', () => {
    const metrics = emfMetrics('Test');
    // CloudWatch allows 30 dimensions per set (Powertools keeps one for `service`): refused when added.
    const tooMany = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`label${i}`, 'x']));
    // A label named like the metric: refused when the line is serialised, after its dimensions were added.
    const collision = { llm_alert_pipeline_alerts_received_total: 'x' } as unknown as Record<never, string>;
    const lines = emitted(() => {
      expect(() => metrics.inc('alerts_received_total', tooMany as Record<never, string>)).not.toThrow();
      expect(() => metrics.inc('alerts_received_total', collision)).not.toThrow();
      metrics.inc('alerts_received_total', {});
    });
    expect(lines.map(shape)).toEqual([
      {
        Namespace: 'Test',
        Dimensions: [[]],
        Metrics: [{ Name: 'llm_alert_pipeline_alerts_received_total', Unit: 'Count' }],
        fields: { llm_alert_pipeline_alerts_received_total: 1 },
      },
    ]);
  });
});
