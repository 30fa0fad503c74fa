/**
 * Signal definitions on vLLM engine metrics shared by several enrichers (so that a group holding,
 * say, a queue and a latency alert for one model asks Prometheus once).
 * @see https://docs.vllm.ai/en/latest/design/metrics.html
 */
import { selector } from '../prometheus/promql.js';
import type { SignalSpec } from './enricher.js';

/** `vllm:num_requests_waiting`: requests queued, not yet scheduled (count). */
export function requestsWaiting(scope: readonly string[]): SignalSpec {
  return { name: 'requests_waiting', label: 'Requests waiting', unit: 'count', query: `sum(${selector('vllm:num_requests_waiting', scope)})` };
}

/** `vllm:num_requests_running`: requests in the running batch (count). */
export function requestsRunning(scope: readonly string[]): SignalSpec {
  return { name: 'requests_running', label: 'Requests running', unit: 'count', query: `sum(${selector('vllm:num_requests_running', scope)})` };
}
