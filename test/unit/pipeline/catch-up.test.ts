import { describe, expect, it } from 'vitest';
import type { WebhookMessage } from '../../../shared/alertmanager/schema.js';
import type { Verdict } from '../../../shared/alert-state/types.js';
import { createLogger } from '../../../shared/core/logger.js';
import { catchUpResolves, type CatchUpDeps } from '../../../shared/pipeline/catch-up.js';
import type { GroupResult } from '../../../shared/pipeline/context.js';
import type { AlertRecord } from '../../../shared/store/alert-record.js';

const NOW = Date.parse('2026-12-01T10:00:00Z');

function record(fingerprint: string, groupKey: string, labels: Record<string, string>): AlertRecord {
  return {
    fingerprint,
    startsAt: '2026-12-01T09:00:00.000Z',
    status: 'firing',
    alert: {
      status: 'firing',
      labels,
      annotations: { summary: `${labels.model_name} waits`, runbook_url: 'https://runbooks.example.com/q' },
      startsAt: '2026-12-01T09:00:00.000Z',
      endsAt: '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph',
      fingerprint,
    },
    groupKey,
    externalURL: 'http://alertmanager:9093',
    channels: ['slack'],
    notifiedAt: '2026-12-01T09:00:31.000Z',
  };
}

const queue = (model: string) => ({ alertname: 'VLLMQueueBacklog', model_name: model, severity: 'warning' });
const records = [
  record('a1', '{}:{alertname="VLLMQueueBacklog"}', queue('a')),
  record('b2', '{}:{alertname="VLLMQueueBacklog"}', queue('b')),
  record('c3', '{}:{alertname="VLLMQueueBacklog"}', queue('c')),
  record('d4', '{}:{alertname="VLLMKVCacheNearlyFull"}', { alertname: 'VLLMKVCacheNearlyFull', model_name: 'd' }),
  record('e5', '{}:{alertname="VLLMKVCacheNearlyFull"}', { alertname: 'VLLMKVCacheNearlyFull', model_name: 'e' }),
  record('hb', '{}:{alertname="AlertingPipelineHeartbeatMissing"}', { alertname: 'AlertingPipelineHeartbeatMissing' }),
];

function run(verdicts: Record<string, Verdict['state']>, overrides: Partial<CatchUpDeps> = {}) {
  const delivered: WebhookMessage[] = [];
  const asked: string[][] = [];
  const logs: string[] = [];
  const deps: CatchUpDeps = {
    records: { list: async () => records },
    statesOf: async (list) => {
      asked.push(list.map((r) => r.fingerprint));
      return new Map(
        list.map((r) => [r.fingerprint, { state: verdicts[r.fingerprint] ?? 'unknown', source: 'prometheus' }]),
      );
    },
    deliver: async (message) => {
      delivered.push(message);
      return { ok: true } as GroupResult;
    },
    skip: (alert) => alert.labels.alertname === 'AlertingPipelineHeartbeatMissing',
    timeoutMs: 1000,
    logger: createLogger('info', (line) => void logs.push(line)),
    now: () => NOW,
    ...overrides,
  };
  return { deps, delivered, asked, logs };
}

describe('catchUpResolves', () => {
  it("announces resolved, one message per groupKey, only what a source says is over, the pipeline's own alert never asked", async () => {
    const { deps, delivered, asked, logs } = run({ a1: 'resolved', b2: 'resolved', c3: 'firing', d4: 'resolved' });
    expect(await catchUpResolves(deps)).toEqual({ firing: 5, resolved: 3, stillFiring: 1, unknown: 1, failed: 0 });
    expect(asked).toEqual([['a1', 'b2', 'c3', 'd4', 'e5']]);
    expect(delivered.map((m) => [m.groupKey, m.alerts.map((a) => a.fingerprint)])).toEqual([
      ['{}:{alertname="VLLMQueueBacklog"}', ['a1', 'b2']],
      ['{}:{alertname="VLLMKVCacheNearlyFull"}', ['d4']],
    ]);
    const [backlog] = delivered;
    expect(backlog).toMatchObject({
      version: '4',
      status: 'resolved',
      receiver: 'llm-alert-pipeline',
      externalURL: 'http://alertmanager:9093',
      commonLabels: { alertname: 'VLLMQueueBacklog', severity: 'warning' },
      commonAnnotations: { runbook_url: 'https://runbooks.example.com/q' },
    });
    expect(backlog!.alerts[0]).toEqual({
      ...records[0]!.alert,
      status: 'resolved',
      endsAt: '2026-12-01T10:00:00.000Z',
    });
    expect(JSON.parse(logs.at(-1)!)).toMatchObject({ event: 'resolves caught up', resolved: 3, unknown: 1 });
  });

  it('counts a resolve whose delivery failed, and goes on with the next group', async () => {
    const tried: string[] = [];
    const { deps } = run(
      { a1: 'resolved', d4: 'resolved' },
      {
        deliver: async (message) => {
          tried.push(message.groupKey);
          if (message.groupKey.includes('Backlog')) throw new Error('store unavailable');
          return { ok: true } as GroupResult;
        },
      },
    );
    expect((await catchUpResolves(deps))?.failed).toBe(1);
    expect(tried).toEqual(['{}:{alertname="VLLMQueueBacklog"}', '{}:{alertname="VLLMKVCacheNearlyFull"}']);
  });

  it('reads nothing and says why without a source', async () => {
    const { deps, logs } = run({}, { statesOf: undefined, records: { list: () => Promise.reject(new Error('read')) } });
    expect(await catchUpResolves(deps)).toBeUndefined();
    expect(JSON.parse(logs[0]!)).toMatchObject({
      event: 'resolves not caught up',
      reason: 'neither PROMETHEUS_URL nor ALERTMANAGER_URL is set',
    });
  });
});
