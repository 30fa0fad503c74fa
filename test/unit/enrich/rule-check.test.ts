/** What users' own rules can and cannot do here: the check of `npm run check-rules`. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkRuleFile, formatRuleReports } from '../../../shared/enrich/rule-check.js';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');
const byName = (path: string) => new Map(checkRuleFile(read(path)).map((r) => [r.alert, r]));

describe('a widely copied article’s four rules', () => {
  const rules = byName('test/fixtures/rules/source-article-rules.yml');

  it('two can never fire on vLLM: one reads a name no version exposes, one a name only the router exposes', () => {
    expect(rules.get('VLLMHighLatency')).toMatchObject({
      neverFires: 'unknown',
      names: [{ name: 'vllm:request_duration_seconds_bucket', status: 'unknown' }],
      kind: 'latency',
      kindFrom: 'its alert name',
    });
    expect(rules.get('VLLMHighErrorRate')).toMatchObject({
      neverFires: 'router',
      names: [
        { name: 'vllm:request_errors_total', status: 'router' },
        { name: 'vllm:request_success_total', status: 'known' },
      ],
    });
    expect(rules.get('VLLMKVCacheHigh')?.neverFires).toBe(false);
    expect(rules.get('VLLMQueueTooLong')?.neverFires).toBe(false);
  });

  it('says which alerts cannot reach their GPUs (every label aggregated away) and which can', () => {
    expect(rules.get('VLLMHighLatency')?.gpu).toMatchObject({ reached: false });
    expect(rules.get('VLLMQueueTooLong')).toMatchObject({ keeps: 'all', gpu: { reached: true } });
  });

  it('names the kind, its signals and the causes it can name', () => {
    expect(rules.get('VLLMKVCacheHigh')).toMatchObject({
      kind: 'kv_cache',
      kindFrom: 'the metrics it reads',
      causes: ['memory_bound', 'kv_cache_pressure'],
    });
    expect(rules.get('VLLMKVCacheHigh')?.signals).toContain('GPU utilization (DCGM)');
  });

  it('writes it as lines a person reads, with the series found now when Prometheus was asked', () => {
    const lines = formatRuleReports(
      checkRuleFile(read('test/fixtures/rules/source-article-rules.yml')),
      new Map([['vllm:num_requests_waiting', 3]]),
    );
    expect(lines).toContain('  NEVER FIRES: it needs a name no known engine version exposes');
    expect(lines).toContain(
      '  ✗ vllm:request_duration_seconds_bucket: no known engine version exposes it; 0 series now',
    );
    expect(
      lines.some(
        (l) => l.startsWith('  ✓ vllm:num_requests_waiting: vLLM every version') && l.endsWith('; 3 series now'),
      ),
    ).toBe(true);
  });
});

describe('the shipped rules', () => {
  const reports = checkRuleFile(read('infra/prometheus/vllm-rules.yml'));

  it('every one can fire, reads only names known engines expose, is recognised by its kind label and reaches its GPUs', () => {
    expect(reports.map((r) => r.alert)).toHaveLength(9);
    for (const r of reports) {
      expect(r.neverFires, r.alert).toBe(false);
      expect(
        r.names.filter((n) => n.status === 'unknown' || n.status === 'foreign'),
        r.alert,
      ).toEqual([]);
      expect(r.kindFrom, r.alert).toBe('its kind label');
      expect(r.gpu?.reached, r.alert).toBe(true);
    }
  });

  it('keeps the pod where the GPU is found by it, and looks the others up by model', () => {
    const gpu = new Map(reports.map((r) => [r.alert, r.gpu?.how]));
    expect(gpu.get('VLLMKVCacheNearlyFull')).toBe('by its pod');
    expect(gpu.get('VLLMErrorRateHigh')).toBe('by its pod');
    expect(gpu.get('VLLMQueueBacklog')).toMatch(/^through the servers its model_name select/);
  });
});

describe('a file that is not a rule file', () => {
  it('is refused with what is wrong', () => {
    expect(() => checkRuleFile('route:\n  receiver: x\n')).toThrow('not a Prometheus rule file');
  });
});
