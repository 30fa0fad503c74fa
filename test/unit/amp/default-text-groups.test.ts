/**
 * Amazon Managed Prometheus's default text body carries no group key: the group identity is made from
 * what it does carry, so unrelated groups (a KV-cache alert of one model, a memory leak on another node)
 * never share one Slack thread or card, and one group keeps one identity while its membership changes.
 * The group labels come from the default subject when it names them unambiguously (`[FIRING:n] <group
 * values> (<other common values>)`, Alertmanager's `__subject`); otherwise the alerts' common labels stand in.
 */
import { describe, expect, it } from 'vitest';
import { parseDefaultText } from '../../../shared/amp/default-text.js';
import { superLinear } from '../../helpers/linear-time.js';

const CONTEXT = { truncated: false, publishedAt: '2026-11-29T12:43:05.512Z', receiver: 'amp-alerts' };

/** One alert as `__text_alert_list` writes it: labels and annotations sorted by name. */
function alertText(labels: Record<string, string>, summary: string): string {
  const pairs = (o: Record<string, string>) =>
    Object.keys(o)
      .sort()
      .map((k) => ` - ${k} = ${o[k]}`);
  return [
    'Labels:',
    ...pairs(labels),
    'Annotations:',
    ...pairs({ summary }),
    'Source: http://prometheus:9090/graph',
    '',
  ].join('\n');
}
/** The body: the common annotations' values (here: the one summary all alerts share, else none), then the alerts. */
const body = (alerts: string[], opening = '') => `${opening}\n\nAlerts Firing:\n${alerts.join('')}\n`;

const KV = { alertname: 'VLLMKVCacheNearlyFull', severity: 'critical', model_name: 'qwen3-8b', kind: 'cache' };
const LEAK = { alertname: 'GPUMemoryLeak', severity: 'warning', Hostname: 'gpu-node-7', gpu: '0', kind: 'gpu_memory' };

function keyOf(text: string, subject?: string) {
  const parsed = parseDefaultText(text, { ...CONTEXT, ...(subject && { subject }) });
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.message;
}

describe('the group identity of a default-text message', () => {
  it('keeps unrelated groups apart', () => {
    const kv = keyOf(
      body([alertText(KV, 'qwen3-8b cache 97%')], 'qwen3-8b cache 97%'),
      '[FIRING:1] VLLMKVCacheNearlyFull (cache qwen3-8b critical)',
    );
    const leak = keyOf(
      body([alertText(LEAK, 'gpu 0 leaking')], 'gpu 0 leaking'),
      '[FIRING:1] GPUMemoryLeak (gpu-node-7 0 gpu_memory warning)',
    );
    expect(kv.groupKey).not.toBe(leak.groupKey);
    expect(kv.groupKey).toBe('amp/amp-alerts:{alertname="VLLMKVCacheNearlyFull"}');
    expect(kv.groupLabels).toEqual({ alertname: 'VLLMKVCacheNearlyFull' });
  });

  it('gives one group one identity while its alerts change (group labels read from the subject)', () => {
    const a = { ...KV, model_name: 'llama-3.1-70b' };
    const one = keyOf(
      body([alertText(a, 'a')], 'a'),
      '[FIRING:1] VLLMKVCacheNearlyFull llama-3.1-70b (cache critical)',
    );
    const b = { ...a, instance: '10.0.0.2:8000' };
    const c = { ...a, instance: '10.0.0.3:8000' };
    const two = keyOf(
      body([alertText(b, 'b'), alertText(c, 'c')]),
      '[FIRING:2] VLLMKVCacheNearlyFull llama-3.1-70b (cache critical)',
    );
    expect(one.groupKey).toBe('amp/amp-alerts:{alertname="VLLMKVCacheNearlyFull",model_name="llama-3.1-70b"}');
    expect(two.groupKey).toBe(one.groupKey);
  });

  it('without a subject that names the group, the common labels keep unrelated groups apart', () => {
    const kv = keyOf(body([alertText(KV, 'x')], 'x'));
    const other = keyOf(body([alertText({ ...KV, model_name: 'mistral-7b' }, 'y')], 'y'));
    const leak = keyOf(body([alertText(LEAK, 'z')], 'z'), 'Alerts from AMP');
    expect(new Set([kv.groupKey, other.groupKey, leak.groupKey]).size).toBe(3);
    expect(kv.groupLabels).toEqual({});
  });
});

describe('a default-text message with thousands of common labels', () => {
  /** One alert with `n` labels of the same value, and a subject that repeats it (many splits read alike). */
  const many = (n: number) => {
    const labels = Object.fromEntries(Array.from({ length: n }, (_, i) => [`l${String(i).padStart(5, '0')}`, 'a']));
    return {
      text: body([alertText({ alertname: 'Many', ...labels }, 's')], 's'),
      subject: `[FIRING:1] ${Array.from({ length: 44 }, () => 'a').join(' ')}`,
    };
  };
  const parse = ({ text, subject }: ReturnType<typeof many>) => parseDefaultText(text, { ...CONTEXT, subject });

  it('never throws (8,000 labels once overflowed the stack): a subject it cannot check is a body not parsed', () => {
    // Not parsed is delivered whole (`AMPUnparsedMessage`), as for any body whose structure cannot be proven.
    expect(parse(many(8_000))).toEqual({
      ok: false,
      reason: "the subject's label values could not be matched within bounds (too many repeated values)",
    });
  });

  it('is read in linear time in the number of labels', async () => {
    expect(await superLinear(parse, (n) => many(n / 16), 16_000)).toBeUndefined();
  });
});
