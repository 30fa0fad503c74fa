/** Enricher for request-queue alerts. */
import { readSignals, type Enricher } from './enricher.js';
import { scopeOf, VLLM_SCOPE_LABELS } from './scope.js';
import { requestsRunning, requestsWaiting } from './vllm-signals.js';

/** Requests waiting and running now (counts). */
export const queueEnricher: Enricher<'queue'> = {
  kind: 'queue',
  enrich: async (alert, ctx) => {
    const scope = scopeOf(alert, VLLM_SCOPE_LABELS);
    return { signals: await readSignals(ctx, [requestsWaiting(scope), requestsRunning(scope)]) };
  },
};
