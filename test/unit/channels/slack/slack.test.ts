import { describe, expect, it } from 'vitest';
import {
  renderSlack,
  SLACK_MAX_BLOCKS,
  SLACK_MAX_HEADER_CHARS,
  SLACK_MAX_SECTION_CHARS,
  type SlackBlock,
} from '../../../../shared/channels/slack/index.js';
import type { Notification } from '../../../../shared/render/notification.js';
import { fixtureNotification, manyAlertsNotification, stormNotification } from '../../../helpers/notifications.js';

const KV_SILENCE =
  'http://alertmanager.example.com:9093/#/silences/new?filter=%7Balertname%3D%22VLLMKVCacheNearlyFull%22%2Cinstance%3D%22127.0.0.1%3A9800%22%2Cjob%3D%22vllm%22%2Ckind%3D%22cache%22%2Cmodel_name%3D%22qwen3-8b%22%2Cseverity%3D%22critical%22%7D';

const sectionTexts = (blocks: SlackBlock[]) => blocks.flatMap((b) => (b.type === 'section' ? [b.text.text] : []));

describe('renderSlack', () => {
  it('renders the critical KV-cache alert exactly', () => {
    expect(renderSlack(fixtureNotification('firing-kv-cache-critical'))).toEqual({
      text: '🔥 FIRING · critical · VLLMKVCacheNearlyFull (1)\nKV cache 97% full on qwen3-8b',
      blocks: [
        {
          type: 'header',
          text: { type: 'plain_text', text: '🔥 FIRING · critical · VLLMKVCacheNearlyFull (1)', emoji: true },
        },
        {
          type: 'section',
          text: {
            type: 'mrkdwn',
            verbatim: true,
            text:
              '🔥 *KV cache 97% full on qwen3-8b*\n' +
              'model_name: qwen3-8b · instance: 127.0.0.1:9800\n' +
              'KV cache usage: *97.3%* · Waiting requests: *12* · Preemptions: *1.2/s* · TTFT p95: *850 ms*\n' +
              'Started 2026-11-29 12:42:23 UTC',
          },
        },
        {
          type: 'context',
          elements: [
            {
              type: 'mrkdwn',
              verbatim: true,
              text: `<http://prometheus.example.com:9090/graph?g0.expr=vllm%3Agpu_cache_usage_perc+%3E+0.95&amp;g0.tab=1|Graph> · <${KV_SILENCE}|Silence>`,
            },
          ],
        },
      ],
    });
  });

  it('shows the memory trend, GPU labels and values of a leak alert', () => {
    const [, section] = renderSlack(fixtureNotification('firing-gpu-memory-leak')).blocks;
    expect(section).toEqual({
      type: 'section',
      text: {
        type: 'mrkdwn',
        verbatim: true,
        text:
          '🔥 *GPU memory on gpu-node-1 gpu 0 keeps growing*\n' +
          'instance: 127.0.0.1:9800 · gpu: 0 · Hostname: gpu-node-1\n' +
          'GPU memory used: *61,440 MiB*\n' +
          'Memory trend: +1,200 MiB/h · full in ~9.6 h · R² 0.98\n' +
          'Started 2026-11-29 12:42:24 UTC',
      },
    });
  });

  it('marks a resolved group, shows end times, signals the server does not expose on one line, and unavailable enrichment', () => {
    const { blocks } = renderSlack(fixtureNotification('resolved-queue-backlog-two-models'));
    expect(blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: '✅ RESOLVED · warning · VLLMQueueBacklog (2)', emoji: true },
    });
    expect(sectionTexts(blocks)).toEqual([
      '✅ *llama-3.1-70b: 85 requests waiting*\n' +
        'model_name: llama-3.1-70b\n' +
        'Waiting requests: *85* · TTFT p95: *no data (NaN)*\n' +
        '_1 signal not exposed by this server: Running requests_\n' +
        'Started 2026-11-29 12:42:23 UTC · Ended 2026-11-29 12:42:30 UTC\n' +
        'Requests are queueing faster than the engine admits them.',
      '✅ *qwen3-8b: 80 requests waiting*\n' +
        'model_name: qwen3-8b\n' +
        '_enrichment unavailable: Prometheus query timed out after 2000 ms_\n' +
        'Started 2026-11-29 12:42:23 UTC · Ended 2026-11-29 12:42:30 UTC\n' +
        'Requests are queueing faster than the engine admits them.',
    ]);
    const context = blocks[2];
    expect(context?.type === 'context' && context.elements[0]?.text).toContain(
      '<https://runbooks.example.com/vllm/queue-backlog|Runbook>',
    );
  });

  it('fits 60 alerts into 50 blocks and says how many are left out (digest off)', () => {
    const { blocks, text } = renderSlack(manyAlertsNotification(60), { digestAbove: 1000 });
    expect(blocks).toHaveLength(SLACK_MAX_BLOCKS);
    // header + 24 × (section + context) + the "+N more" section
    expect(blocks.at(-1)).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: '+36 more alerts', verbatim: true },
    });
    expect(sectionTexts(blocks)[23]).toContain('model-24: requests waiting');
    expect(text).toContain('(60)');
  });

  it('names the alerts Alertmanager truncated', () => {
    const { blocks } = renderSlack(manyAlertsNotification(2, 5));
    expect(blocks).toHaveLength(1 + 2 * 2 + 1);
    expect(sectionTexts(blocks).at(-1)).toBe('+5 not included by Alertmanager');
  });

  it('at 51 blocks worth of alerts keeps exactly 50, the last saying what is left out', () => {
    // header + 24 × 2 = 49 blocks, +1 "more": 50. With 25 alerts (51 blocks without a limit) one is left out.
    const { blocks } = renderSlack(manyAlertsNotification(25), { digestAbove: 1000 });
    expect(blocks).toHaveLength(SLACK_MAX_BLOCKS);
    expect(sectionTexts(blocks).at(-1)).toBe('+1 more alert');
    const exact = renderSlack(manyAlertsNotification(24), { digestAbove: 1000 }).blocks;
    expect(exact).toHaveLength(49);
    expect(sectionTexts(exact).at(-1)).toContain('model-24');
  });

  it('cuts a long section to 3000 characters without leaving half an entity', () => {
    for (let shift = 0; shift < 5; shift++) {
      const n = fixtureNotification('firing-queue-backlog-two-models');
      n.alerts[0]!.annotations.description = 'x'.repeat(shift) + '&'.repeat(1000);
      const text = sectionTexts(renderSlack(n).blocks)[0]!;
      expect(text.length).toBeLessThanOrEqual(SLACK_MAX_SECTION_CHARS);
      expect(text.length).toBeGreaterThan(SLACK_MAX_SECTION_CHARS - 6);
      expect(text).toMatch(/&amp;…$/);
    }
  });

  it('cuts the header to 150 characters', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.commonLabels.alertname = 'A'.repeat(300);
    const header = renderSlack(n).blocks[0]!;
    expect(header.type === 'header' && header.text.text.length).toBe(SLACK_MAX_HEADER_CHARS);
  });

  it('escapes &, < and > in alert text so nothing reads as a link or mention', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.alerts[0]!.annotations.summary = '<!channel> cache & <http://evil|click>';
    n.alerts[0]!.labels.model_name = 'a<b>';
    const { text, blocks } = renderSlack(n);
    const section = sectionTexts(blocks)[0]!;
    expect(section).toContain('*&lt;!channel&gt; cache &amp; &lt;http://evil|click&gt;*');
    expect(section).toContain('model_name: a&lt;b&gt;');
    expect(section).not.toMatch(/[<>]/);
    expect(text).not.toContain('<!channel>');
  });

  it('percent-encodes characters that would break a link', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.alerts[0]!.annotations.runbook_url = 'https://wiki/x?a=1|2>3';
    const context = renderSlack(n).blocks[2]!;
    expect(context.type === 'context' && context.elements[0]!.text).toContain('<https://wiki/x?a=1%7C2%3E3|Runbook>');
  });
});

describe('right-to-left text in the header and the storm digest', () => {
  const RLO = '\u202E';
  const isolated = (text: string) => `\u2068${text}\u2069`;
  const withLabels = (
    notification: Notification,
    labels: Record<string, string>,
    common: Record<string, string> = labels,
  ): Notification => ({
    ...notification,
    commonLabels: { ...notification.commonLabels, ...common },
    alerts: notification.alerts.map((a) => ({ ...a, labels: { ...a.labels, ...labels } })),
  });
  const headerOf = (blocks: SlackBlock[]) => (blocks[0]?.type === 'header' ? blocks[0].text.text : undefined);

  it('isolates the alert name and severity in the header block (FSI … PDI), so they reorder nothing after them', () => {
    const hostile = withLabels(fixtureNotification('firing-kv-cache-critical'), {
      alertname: `KVCache${RLO}Full`,
      severity: `${RLO}critical`,
    });
    const { blocks, text } = renderSlack(hostile);
    expect(headerOf(blocks)).toBe(`🔥 FIRING · ${isolated(`${RLO}critical`)} · ${isolated(`KVCache${RLO}Full`)} (1)`);
    expect(text.split('\n')[0]).toBe(headerOf(blocks));
  });

  it('isolates each alert name of a group without a common one', () => {
    const two = manyAlertsNotification(2);
    const hostile: Notification = {
      ...two,
      commonLabels: {},
      alerts: two.alerts.map((a, i) => ({ ...a, labels: { ...a.labels, alertname: i ? 'Queue' : `A${RLO}b` } })),
    };
    expect(headerOf(renderSlack(hostile).blocks)).toBe(`🔥 FIRING · warning · ${isolated(`A${RLO}b`)}, Queue (2)`);
  });

  it("isolates the storm digest's alert name, in its header, its counts and its top alerts", () => {
    const named = withLabels(stormNotification(40), { alertname: `Queue${RLO}Backlog` });
    const storm: Notification = {
      ...named,
      alerts: named.alerts.map((a) => ({ ...a, annotations: { summary: `${RLO}backlog` } })),
    };
    const { blocks } = renderSlack(storm);
    expect(headerOf(blocks)).toBe(`🔥 FIRING · critical · Alert storm · ${isolated(`Queue${RLO}Backlog`)} (40)`);
    const sections = sectionTexts(blocks).join('\n');
    expect(sections).toContain(`By alert: ${isolated(`Queue${RLO}Backlog`)} *40*`);
    // Each top alert's title among its severity and model @ instance: an override in it reorders nothing after it.
    const top = sections.split('\n').filter((l) => l.includes(`${RLO}backlog`));
    expect(top).toHaveLength(10);
    for (const line of top)
      expect(line).toMatch(/^🔥 \S+ · \u2068\u202Ebacklog\u2069 · model-\d+ @ 10\.0\.0\.\d+:8000$/);
  });

  it('leaves left-to-right text byte for byte as before', () => {
    expect(headerOf(renderSlack(fixtureNotification('firing-kv-cache-critical')).blocks)).toBe(
      '🔥 FIRING · critical · VLLMKVCacheNearlyFull (1)',
    );
    expect(sectionTexts(renderSlack(stormNotification(40)).blocks).join('\n')).not.toMatch(/[\u2068\u2069]/);
  });
});
