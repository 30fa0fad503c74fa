/**
 * The example routing file (infra/routing.example.yml, documented in docs/routing.md) against the
 * shipped alert rules (infra/prometheus/vllm-rules.yml): who is told about what.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadRoutingFile } from '../../../shared/routing/load.js';
import { createRouter } from '../../../shared/routing/router.js';

const EXAMPLE = fileURLToPath(new URL('../../../infra/routing.example.yml', import.meta.url));
const RULES = fileURLToPath(new URL('../../../infra/prometheus/vllm-rules.yml', import.meta.url));

interface Rule {
  alert: string;
  expr: string;
  labels: Record<string, string>;
}
const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

const routing = loadRoutingFile(EXAMPLE, {
  settings: {
    SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:LlmAlertPipeline-AlertTopic',
    SLACK_PLATFORM_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/platform',
    SLACK_GPU_INFRA_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B1/gpu',
    FEISHU_QWEN_WEBHOOK_URL: 'https://open.feishu.cn/open-apis/bot/v2/hook/qwen',
    FEISHU_QWEN_SIGNING_SECRET: 'signing-secret',
  },
});
const route = createRouter(routing.routes, routing.defaultChannels);

/** The labels an alert of `rule` carries: the rule's own, plus `model_name` when its expression aggregates by it. */
function alertLabels(rule: Rule, model: string): Record<string, string> {
  const labels: Record<string, string> = {
    alertname: rule.alert,
    ...rule.labels,
    instance: '10.0.0.7:8000',
    job: 'vllm',
  };
  if (/by \([^)]*\bmodel_name\b/.test(rule.expr)) labels.model_name = model;
  return labels;
}

describe('infra/routing.example.yml on the shipped rules', () => {
  const LLAMA = 'llama-3.1-70b';
  const QWEN = 'qwen3-8b';
  const expected: Record<string, Record<string, string[]>> = {
    VLLMTimeToFirstTokenHigh: { [LLAMA]: ['platform-slack'], [QWEN]: ['qwen-team-feishu', 'platform-slack'] },
    VLLMKVCacheNearlyFull: {
      [LLAMA]: ['oncall-pager', 'platform-slack'],
      [QWEN]: ['qwen-team-feishu', 'oncall-pager', 'platform-slack'],
    },
    VLLMQueueBacklog: { [LLAMA]: ['platform-slack'], [QWEN]: ['qwen-team-feishu', 'platform-slack'] },
    // Per server, without model_name: the pager, not the model team.
    VLLMErrorRateHigh: { [LLAMA]: ['oncall-pager', 'platform-slack'], [QWEN]: ['oncall-pager', 'platform-slack'] },
    VLLMServerDown: { [LLAMA]: ['oncall-pager', 'platform-slack'], [QWEN]: ['oncall-pager', 'platform-slack'] },
    GPUMemoryLeak: { [LLAMA]: ['gpu-infra-slack'], [QWEN]: ['gpu-infra-slack'] },
    // SGLang's routes like vLLM's: by model, kind and severity, never by engine.
    SGLangTimeToFirstTokenHigh: { [LLAMA]: ['platform-slack'], [QWEN]: ['qwen-team-feishu', 'platform-slack'] },
    SGLangKVCacheNearlyFull: {
      [LLAMA]: ['oncall-pager', 'platform-slack'],
      [QWEN]: ['qwen-team-feishu', 'oncall-pager', 'platform-slack'],
    },
    SGLangQueueBacklog: { [LLAMA]: ['platform-slack'], [QWEN]: ['qwen-team-feishu', 'platform-slack'] },
  };

  it('covers every shipped rule', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual(Object.keys(expected).sort());
  });

  it.each(
    Object.entries(expected).flatMap(([alert, byModel]) =>
      Object.entries(byModel).map(([model, channels]) => [alert, model, channels] as const),
    ),
  )('%s for %s → %j', (alert, model, channels) => {
    const rule = rules.find((r) => r.alert === alert)!;
    expect(route(alertLabels(rule, model))).toEqual(channels);
  });

  it('sends an alert nobody planned for to the platform channel', () => {
    expect(route({ alertname: 'SomethingNew', severity: 'info' })).toEqual(['platform-slack']);
  });

  it('pages through the stack topic with per-protocol bodies, and speaks Chinese to the Qwen team', () => {
    expect(routing.channels.find((c) => c.name === 'oncall-pager')).toMatchObject({
      type: 'sns',
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:LlmAlertPipeline-AlertTopic',
      messageStructure: 'json',
    });
    expect(routing.channels.find((c) => c.name === 'qwen-team-feishu')).toMatchObject({
      type: 'feishu',
      locale: 'zh-CN',
    });
    expect(routing.flapWindowMs).toBe(30 * 60_000);
  });
});
