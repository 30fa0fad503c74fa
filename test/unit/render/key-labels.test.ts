/** The labels a message shows: dcgm-exporter's node label in both spellings (`Hostname` before 2026, `hostname` since). */
import { describe, expect, it } from 'vitest';
import { alertLines, PLAIN } from '../../../shared/render/content.js';
import { exposition } from '../../fixtures/exposition/index.js';
import { ruleAlert } from '../../fixtures/prometheus/alerts.js';

describe('key labels of a GPU alert', () => {
  it.each([
    ['dcgm-3.x-mig-Hostname', 'Hostname: gpu-node-a'],
    ['dcgm-2026-hostname', 'hostname: dcgm-exporter-0'],
  ] as const)('%s: names the node', (fixture, expected) => {
    const labels = { alertname: 'GPUMemoryLeak', ...exposition(fixture)[0]!.labels };
    const alert = {
      ...ruleAlert(labels, 'deriv(DCGM_FI_DEV_FB_USED[30m]) * 3600 > 500', 'f'),
      enrichment: { status: 'unavailable' as const, kind: 'gpu_memory' as const, reason: 'x' },
    };
    expect(alertLines(alert, PLAIN).join('\n')).toContain(expected);
  });
});

describe('label values and titles with right-to-left text', () => {
  const alertWith = (labels: Record<string, string>, summary: string) => ({
    ...ruleAlert({ alertname: 'VLLMQueueBacklog', ...labels }, 'x > 0', 'f'),
    annotations: { summary },
    enrichment: { status: 'unavailable' as const, kind: 'queue' as const, reason: 'x' },
  });

  it('isolates a value holding bidi controls or right-to-left letters (FSI … PDI), so it reorders nothing after it', () => {
    const lines = alertLines(
      alertWith({ model_name: '\u202Eaxbrp', instance: '10.0.0.1:8000' }, 'queue on \u05D0\u05D1'),
      PLAIN,
    ).join('\n');
    expect(lines).toContain('model_name: \u2068\u202Eaxbrp\u2069 · instance: 10.0.0.1:8000');
    expect(lines).toContain('\u2068queue on \u05D0\u05D1\u2069');
  });

  it('an isolate closer inside the value cannot end the isolation early', () => {
    const lines = alertLines(alertWith({ model_name: 'a\u2069\u202Eaxbrp' }, 's'), PLAIN).join('\n');
    expect(lines).toContain('model_name: \u2068a\u202Eaxbrp\u2069');
  });

  it('leaves left-to-right text as it is', () => {
    expect(alertLines(alertWith({ model_name: 'qwen3-8b' }, 'Queue backlog'), PLAIN).join('\n')).toContain(
      'Queue backlog\nmodel_name: qwen3-8b',
    );
  });
});
