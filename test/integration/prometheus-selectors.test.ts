/**
 * The PromQL the enrichment builds from alert labels, run by the real Prometheus (2.42, Debian) over
 * series whose label values hold everything a label value may hold: quotes, backslashes, newlines,
 * tabs, U+FFFD, emoji, RE2 metacharacters. Each selector must parse and select exactly its own series.
 * Quoted (UTF-8) label names need Prometheus 3: 2.42 refuses them, which is checked too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrometheusClient } from '../../shared/prometheus/client.js';
import { aggregate, equalityMatchers, groupMatchers, selector } from '../../shared/prometheus/promql.js';
import { openMetricsLine, startPrometheus, type RunningPrometheus } from '../fixtures/prometheus/real-prometheus.js';

const METRIC = 'vllm:num_requests_waiting';
const VALUES = [
  'qwen3-8b',
  'say "hi"',
  'C:\\models\\',
  'line1\nline2',
  'tab\there',
  'bad\ufffdbyte',
  '模型🔥',
  'a.b|c*',
  '(x)[y]{z}^$+?',
  ' spaced ',
  'qwen3.8b',
];

let prometheus: RunningPrometheus;
let client: PrometheusClient;
let now: Date;

beforeAll(async () => {
  now = new Date();
  const t = Math.floor(now.getTime() / 1000) - 60;
  const lines = [
    `# TYPE ${METRIC} gauge`,
    ...VALUES.map((v, i) => openMetricsLine(METRIC, { model_name: v, job: 'vllm' }, i, t)),
    '# EOF',
    '',
  ];
  prometheus = await startPrometheus(lines.join('\n'));
  client = new PrometheusClient(prometheus.url);
});
afterAll(async () => {
  await prometheus?.stop();
});

/** The `model_name` values of the series the expression returns, sorted. */
async function selected(expr: string): Promise<string[]> {
  const { result } = await client.instantQuery(expr, { time: now });
  return result.map((s) => s.metric.model_name ?? '').sort();
}

describe('selectors built from label values (real Prometheus)', () => {
  it('stores every test value (the fixture is right)', async () => {
    expect(await selected(METRIC)).toEqual([...VALUES].sort());
  });

  it.each(VALUES.map((v) => [v]))('equality selects exactly %j', async (value) => {
    expect(
      await selected(selector(METRIC, equalityMatchers({ model_name: value, job: 'vllm' }, ['model_name', 'job']))),
    ).toEqual([value]);
  });

  it('an alternation over several values selects exactly those, aggregated by the label', async () => {
    const some = VALUES.filter((_, i) => i % 2 === 1);
    const expr = aggregate(
      'sum',
      ['model_name'],
      selector(
        METRIC,
        groupMatchers(
          some.map((v) => ({ model_name: v })),
          ['model_name'],
        ),
      ),
    );
    expect(await selected(expr)).toEqual([...some].sort());
    expect(
      await selected(
        selector(
          METRIC,
          groupMatchers(
            VALUES.map((v) => ({ model_name: v })),
            ['model_name'],
          ),
        ),
      ),
    ).toEqual([...VALUES].sort());
  });

  it('Prometheus 2 refuses a quoted UTF-8 label name: Prometheus 3 syntax only', async () => {
    await expect(
      client.instantQuery(selector(METRIC, equalityMatchers({ 'service.name': 'x' }, ['service.name'])), { time: now }),
    ).rejects.toMatchObject({ errorType: 'bad_data' });
  });
});
