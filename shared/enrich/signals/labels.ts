/**
 * Every signal's label in Chinese, by its stable `name` (`Signal.name`): the English label is the
 * signal definition's own (`vllm.ts`, `dcgm.ts`, `kinds/*.ts`); zh-CN channels, pages and charts show
 * this one. Keyed by name rather than stored with each reading, so alert records written before a
 * label existed read in Chinese too. `test/unit/enrich/signal-labels.test.ts` fails when a signal
 * that an enricher reads has no entry here.
 *
 * Terms an ops engineer says in English stay English (TTFT, KV cache, prefill, decode, token, job,
 * target); the rest is plain Chinese.
 */
import type { Locale } from '../../core/locale.js';
import type { Signal } from '../types.js';
import { HOST_AVERAGE } from './dcgm.js';

export const SIGNAL_LABELS_ZH: Readonly<Record<string, string>> = {
  requests_waiting: '排队请求数',
  requests_running: '运行中请求数',
  requests_waiting_capacity: '排队（等容量）',
  requests_deferred: '排队（延后：KV 传输、LoRA）',
  kv_cache_usage_ratio: 'KV cache 使用率',
  preemptions_per_second: '抢占',
  prompt_tokens_per_second: '输入 token',
  generation_tokens_per_second: '输出 token',
  prompt_tokens_mean: '平均 prompt 长度（token）',
  ttft_p50_seconds: 'TTFT p50',
  ttft_p95_seconds: 'TTFT p95',
  ttft_p99_seconds: 'TTFT p99',
  e2e_p50_seconds: '端到端延迟 p50',
  e2e_p99_seconds: '端到端延迟 p99',
  itl_p95_seconds: 'Token 间延迟 p95',
  tpot_mean_seconds: '每个输出 token 耗时（均值）',
  queue_time_mean_seconds: '排队时间（均值）',
  prefill_time_mean_seconds: 'Prefill 耗时（均值）',
  decode_time_mean_seconds: 'Decode 耗时（均值）',
  prefix_cache_hit_ratio: '前缀缓存命中率',
  http_5xx_ratio: 'HTTP 5xx 占比',
  http_4xx_ratio: 'HTTP 4xx 占比',
  failed_ratio: '失败占比（vLLM）',
  failed_per_second: '失败请求（vLLM）',
  finished_per_second: '完成请求',
  rejected_per_second: '被拒请求（4xx，vLLM）',
  rejected_ratio: '被拒占比（4xx，vLLM）',
  aborted_ratio: '客户端中断占比',
  gpu_memory_configured_ratio: '配置的显存份额',
  length_capped_ratio: '达到长度上限的占比',
  gpu_memory_used_mib: '显存用量',
  memory_used_mib: '内存用量',
  gpu_memory_total_mib: '显存总量',
  down_for_seconds: '已宕机（距上次抓取成功）',
  up_ratio_1h: '抓取成功率（近 1 小时）',
  job_targets_up: '该 job 正常的 target 数',
  job_targets: '该 job 的 target 数',
  expression_value: '规则表达式的值',
  gpu_utilization_ratio: 'GPU 利用率',
  gpu_xid_last: 'GPU XID 错误码（最近一次）',
  gpus_reporting: '上报的 GPU 数（DCGM）',
  gpu_memory_used_ratio: '显存使用率',
};

/** Values of a split signal's label (`SignalSplit.labels`, after `name:`) in Chinese. */
const SPLIT_VALUES_ZH: Readonly<Record<string, string>> = { v0: 'V0 引擎', v1: 'V1 引擎' };
const HOST_AVERAGE_ZH = '（主机平均）';

/**
 * The signal's label in `locale`: its own (English) label, or its Chinese one. A split reading
 * (`ttft_p95_seconds:v1`) adds its value's text, a breakdown value (`finished_per_second:length`, a label
 * value) stays as sent; a reading averaged over a host's GPUs says so. A name without an entry keeps
 * its English label.
 */
export function signalLabel(signal: Pick<Signal, 'name' | 'label'>, locale: Locale = 'en'): string {
  if (locale === 'en') return signal.label;
  const [base = '', part] = splitName(signal.name);
  let zh = SIGNAL_LABELS_ZH[base];
  if (zh === undefined) return signal.label;
  if (base === 'memory_used_mib') zh = `${zh}${memorySeries(signal.label)}`;
  if (part !== undefined) zh = `${zh}（${SPLIT_VALUES_ZH[part] ?? part}）`;
  return signal.label.endsWith(HOST_AVERAGE) ? `${zh}${HOST_AVERAGE_ZH}` : zh;
}

/** `name:value` → `[name, value]`; a name without `:` → `[name]`. */
function splitName(name: string): [string, string?] {
  const at = name.indexOf(':');
  return at < 0 ? [name] : [name.slice(0, at), name.slice(at + 1)];
}

/** The series of `Memory used (process_resident_memory_bytes)`, as `（series）`. */
function memorySeries(label: string): string {
  const open = label.indexOf('(');
  return open < 0 ? '' : `（${label.slice(open + 1, label.lastIndexOf(')'))}）`;
}
