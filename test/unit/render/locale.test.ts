import { likelyCause } from '../../../shared/enrich/causes/likely-cause.js';
import { CAUSE_RULES } from '../../../shared/enrich/causes/rules.js';
import { describe, expect, it } from 'vitest';
import { createConsoleChannel } from '../../../shared/channels/console.js';
import { moreAlertsText } from '../../../shared/render/content.js';
import { count, linkLabel } from '../../../shared/render/locale.js';
import { renderSlack, type SlackBlock } from '../../../shared/channels/slack/index.js';
import { renderText } from '../../../shared/render/text.js';
import { fixtureNotification } from '../../helpers/notifications.js';

const sections = (blocks: SlackBlock[]) => blocks.flatMap((b) => (b.type === 'section' ? [b.text.text] : []));

describe('locales', () => {
  it('renders Slack in Chinese when the instance asks for it, leaving label values and annotations as sent', () => {
    const { blocks, text } = renderSlack(fixtureNotification('firing-kv-cache-critical'), { locale: 'zh-CN' });
    expect(text.split('\n')[0]).toBe('🔥 告警 · critical · VLLMKVCacheNearlyFull (1)');
    expect(sections(blocks)[0]).toContain('开始于 2026-11-29 12:42:23 UTC');
    expect(sections(blocks)[0]).toContain('*KV cache 97% full on qwen3-8b*');
    expect(JSON.stringify(blocks)).toContain('|Prometheus 图表>');
  });

  it('words a likely cause of a rule this version does not have in the instance’s language, its text as stored', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    const [alert] = n.alerts;
    alert!.enrichment = {
      status: 'enriched',
      kind: 'kv_cache',
      signals: [],
      likelyCause: { rule: 'r', cause: 'KV cache pressure.', action: 'Add replicas.', evidence: ['a', 'b'] },
    };
    const zh = sections(renderSlack(n, { locale: 'zh-CN' }).blocks)[0]!;
    expect(zh).toContain('可能原因：KV cache pressure.\n依据：a；b\n建议：Add replicas.');
    expect(zh).not.toMatch(/Likely cause|Evidence|Try:/);
    expect(sections(renderSlack(n).blocks)[0]).toContain(
      'Likely cause: KV cache pressure.\nEvidence: a; b\nTry: Add replicas.',
    );
  });

  it('words a rule’s cause, its evidence and what to try in Chinese for a zh-CN instance, from the same facts', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    const signals = [
      { name: 'kv_cache_usage_ratio', label: 'KV cache usage', value: 0.97, unit: 'ratio' as const, query: 'q' },
      { name: 'preemptions_per_second', label: 'Preemptions', value: 0.5, unit: 'per_second' as const, query: 'q' },
    ];
    const cause = likelyCause('kv_cache', { signals })!;
    n.alerts[0]!.enrichment = { status: 'enriched', kind: 'kv_cache', signals, likelyCause: cause };
    const zh = sections(renderSlack(n, { locale: 'zh-CN' }).blocks)[0]!;
    expect(zh).toContain('KV cache 使用率: *97%* · 抢占: *0.5/s*');
    expect(zh).toContain(`可能原因：${CAUSE_RULES.find((r) => r.id === 'kv_cache_pressure')!.zh.cause}`);
    expect(zh).toContain('依据：KV cache 使用率 97%（≥ 90%）；抢占 0.5/s（&gt; 0/s）');
    expect(zh).toContain('建议：给 KV cache 更多显存（--gpu-memory-utilization）');
    const en = sections(renderSlack(n).blocks)[0]!;
    expect(en).toContain(`Likely cause: ${cause.cause}`);
    expect(en).toContain('Evidence: KV cache usage 97% (≥ 90%); Preemptions 0.5/s (&gt; 0/s)');
  });

  it('words a memory trend, its basis and why there is no forecast in the instance’s language', () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    const trend = {
      growthMiBPerHour: 800,
      rSquared: 0.998,
      usedMiB: 20_000,
      capacityMiB: 81_920,
      hoursToFull: 74,
      windowSeconds: 9000,
      points: 150,
      method: 'theil-sen' as const,
      growing: true,
      restartedAt: '2026-11-29T10:15:00Z',
      series: 'process_resident_memory_bytes',
    };
    n.alerts[0]!.enrichment = { status: 'enriched', kind: 'gpu_memory', signals: [], trend };
    const line = (locale?: 'zh-CN') =>
      renderText(n, Infinity, { locale })
        .split('\n')
        .find((l) => /^(Memory trend|显存趋势)/.test(l));
    expect(line('zh-CN')).toBe(
      '显存趋势: +800 MiB/h · 约 3.1 天后占满 · R² 1.00 (Theil–Sen 拟合，时间窗 2.5 小时，自 2026-11-29 10:15:00 UTC 重启以来，序列 process_resident_memory_bytes)',
    );
    expect(line()).toBe(
      'Memory trend: +800 MiB/h · full in ~3.1 d · R² 1.00 (Theil–Sen fit over 2.5 h, since a restart at 2026-11-29 10:15:00 UTC, of process_resident_memory_bytes)',
    );
    n.alerts[0]!.enrichment = {
      status: 'enriched',
      kind: 'gpu_memory',
      signals: [],
      trend: {
        ...trend,
        growing: false,
        hoursToFull: null,
        restartedAt: undefined,
        series: undefined,
        noForecast: { reason: 'short_history', seconds: 390, neededSeconds: 1800 },
      },
    };
    expect(line('zh-CN')).toBe('显存趋势: 历史数据不足（已有 6 分钟，需要 30 分钟） (Theil–Sen 拟合，时间窗 2.5 小时)');
    expect(line()).toBe('Memory trend: not enough history (6 min of the 30 min needed) (Theil–Sen fit over 2.5 h)');
  });

  it('says what was left out: ours, Alertmanager’s, or both', () => {
    expect(moreAlertsText(0)).toBe('');
    expect(moreAlertsText(1)).toBe('+1 more alert');
    expect(moreAlertsText(37)).toBe('+37 more alerts');
    expect(moreAlertsText(0, { truncated: 1497 })).toBe('+1,497 not included by Alertmanager');
    expect(moreAlertsText(2, { truncated: 1497, locale: 'zh-CN' })).toBe(
      '另有 2 条告警 · 另有 1,497 条未被 Alertmanager 包含',
    );
  });

  it('keeps labels it has no translation for', () => {
    expect(linkLabel('Acknowledge', 'zh-CN')).toBe('Acknowledge');
    expect(linkLabel('Runbook', 'zh-CN')).toBe('处理手册');
  });

  it('gives a console instance its locale', async () => {
    const written: string[] = [];
    await createConsoleChannel((s) => written.push(s), { name: 'ops-console', locale: 'zh-CN' }).send(
      fixtureNotification('firing-kv-cache-critical'),
      AbortSignal.timeout(1000),
    );
    expect(written[0]).toContain('🔥 告警 · critical');
  });
});

describe('flapping marks', () => {
  const flapping = () => {
    const n = fixtureNotification('firing-kv-cache-critical');
    n.flapping = { [n.alerts[0]!.fingerprint]: { count: 3, sinceMs: Date.parse('2026-11-29T12:05:00Z') } };
    return n;
  };

  it('heads the message FLAPPING and says how often the alert fired', () => {
    const { blocks } = renderSlack(flapping());
    expect(blocks[0]).toMatchObject({
      type: 'header',
      text: { text: '🔁 FLAPPING · critical · VLLMKVCacheNearlyFull (1)' },
    });
    expect(sections(blocks)[0]!.split('\n').slice(0, 2)).toEqual([
      '🔁 *KV cache 97% full on qwen3-8b*',
      '_Flapping: fired 3 times since 2026-11-29 12:05:00 UTC_',
    ]);
  });

  it('marks only the flapping alert when others in the group are new', () => {
    const n = fixtureNotification('firing-queue-backlog-two-models');
    n.flapping = { [n.alerts[1]!.fingerprint]: { count: 2, sinceMs: Date.parse('2026-11-29T12:30:00Z') } };
    const text = renderText(n);
    expect(text.split('\n')[0]).toBe('🔥 FIRING · warning · VLLMQueueBacklog (2)');
    expect(text).toContain('🔁 qwen3-8b: 80 requests waiting\nFlapping: fired 2 times since 2026-11-29 12:30:00 UTC');
    expect(text).toContain('🔥 llama-3.1-70b: 85 requests waiting\n');
  });

  it('speaks Chinese too', () => {
    expect(renderText(flapping(), Infinity, { locale: 'zh-CN' })).toContain(
      '抖动：自 2026-11-29 12:05:00 UTC 起已触发 3 次',
    );
  });
});

describe('count', () => {
  it('writes every number as en-US grouping with no fraction digits does (the fast path for 0–999 included)', () => {
    const intl = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
    const numbers = [
      0,
      -0,
      1,
      7,
      999,
      1000,
      1497,
      12_345_678,
      -1,
      -999,
      -1000,
      0.4,
      0.5,
      1.5,
      2.5,
      998.5,
      999.4,
      999.5,
      -0.4,
      -2.5,
      1e21,
      Number.NaN,
      Infinity,
      -Infinity,
    ];
    for (let n = 0; n <= 2000; n++) numbers.push(n, n + 0.49, n / 7);
    for (const n of numbers) expect(count(n), String(n)).toBe(intl.format(n));
  });
});
