import { describe, expect, it } from 'vitest';
import { consoleText, createConsoleChannel } from '../../../shared/channels/console.js';
import { alertLinks } from '../../../shared/render/content.js';
import { renderText } from '../../../shared/render/text.js';
import { fixtureNotification, loadFixture, manyAlertsNotification } from '../../helpers/notifications.js';

describe('renderText', () => {
  it('renders the memory-leak alert as plain text with links spelled out', () => {
    expect(renderText(fixtureNotification('firing-gpu-memory-leak'))).toBe(
      [
        '🔥 FIRING · warning · GPUMemoryLeak (1)',
        '',
        '🔥 GPU memory on gpu-node-1 gpu 0 keeps growing',
        'instance: 127.0.0.1:9800 · gpu: 0 · Hostname: gpu-node-1',
        'GPU memory used: 61,440 MiB',
        'Memory trend: +1,200 MiB/h · full in ~9.6 h · R² 0.98',
        'Started 2026-11-29 12:42:24 UTC',
        'Graph: http://prometheus.example.com:9090/graph?g0.expr=deriv%28DCGM_FI_DEV_FB_USED%5B30s%5D%29+%3E+10&g0.tab=1',
        'Silence: http://alertmanager.example.com:9093/#/silences/new?filter=%7Balertname%3D%22GPUMemoryLeak%22%2CHostname%3D%22gpu-node-1%22%2Cgpu%3D%220%22%2Cinstance%3D%22127.0.0.1%3A9800%22%2Cjob%3D%22vllm%22%2Ckind%3D%22memory%22%2CmodelName%3D%22NVIDIA%20H100%2080GB%20HBM3%22%2Cseverity%3D%22warning%22%7D',
      ].join('\n'),
    );
  });

  it('leaves out whole alerts beyond the byte limit and says how many', () => {
    const n = manyAlertsNotification(10);
    const full = renderText(n);
    const cut = renderText(n, Math.floor(Buffer.byteLength(full) / 2));
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(Math.floor(Buffer.byteLength(full) / 2));
    const shown = cut.split('\n\n').length - 2;
    expect(cut.endsWith(`\n\n+${10 - shown} more alerts`)).toBe(true);
    expect(cut).toContain('model-1: requests waiting');
  });
});

describe('console channel', () => {
  it('writes the rendered notification through the injected writer', async () => {
    const written: string[] = [];
    const channel = createConsoleChannel((s) => written.push(s));
    const n = fixtureNotification('firing-kv-cache-critical');
    await channel.send(n, new AbortController().signal);
    expect(channel.name).toBe('console');
    expect(written).toHaveLength(1);
    expect(written[0]).toContain(`\n${consoleText(renderText(n))}\n`);
    expect(written[0]).toContain(
      '\n│ 🔥 FIRING · critical · VLLMKVCacheNearlyFull (1)\n│\n│ 🔥 KV cache 97% full on qwen3-8b\n',
    );
    expect(written[0]?.endsWith('\n')).toBe(true);
  });
});

describe('links of a resolved alert', () => {
  it('offer the graph and runbook but no silence', () => {
    const alert = {
      ...loadFixture('resolved-queue-backlog-two-models').alerts[0]!,
      enrichment: { status: 'unavailable' as const, kind: 'queue' as const, reason: 'test' },
    };
    expect(alertLinks(alert, 'http://am:9093').map((l) => l.label)).toEqual(['Graph', 'Runbook']);
    expect(alertLinks({ ...alert, status: 'firing' }, 'http://am:9093').map((l) => l.label)).toEqual([
      'Graph',
      'Runbook',
      'Silence',
    ]);
  });
});
