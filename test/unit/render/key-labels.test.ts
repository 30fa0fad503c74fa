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
    const alert = { ...ruleAlert(labels, 'deriv(DCGM_FI_DEV_FB_USED[30m]) * 3600 > 500', 'f'), enrichment: { status: 'unavailable' as const, kind: 'gpu_memory' as const, reason: 'x' } };
    expect(alertLines(alert, PLAIN).join('\n')).toContain(expected);
  });
});
