/**
 * `GRAFANA_URL` from the environment to the message: `loadConfig` → `createDeps` → the pipeline →
 * the console channel's text, through the real app on dynalite; and to the escalation message (the
 * check run as its schedule would, a real Slack channel instance on loopback).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { silentLogger } from '../../shared/core/logger.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import { checkEscalation } from '../../shared/escalation/escalation.js';
import { fixture, fixtureText } from '../helpers/fixtures.js';
import { startLoopback } from '../helpers/loopback.js';
import { ackHarness } from './ack-harness.js';

let db: LocalDynamoDb;
let tables = 0;

beforeAll(async () => {
  db = await startLocalDynamoDb('grafana-link-0');
});
afterAll(async () => db.close());

/** The console channel's output for the KV-cache fixture under `env`. */
async function consoleText(env: Record<string, string>): Promise<string> {
  const tableName = `grafana-link-${++tables}`;
  await ensureTable(db.client, tableName);
  const written: string[] = [];
  const config = loadConfig({ ALLOW_UNAUTHENTICATED: 'true', TABLE_NAME: tableName, HEARTBEAT_ALERTNAME: '', ...env });
  const app = createApp(
    config,
    createDeps(config, { dynamodb: db.client, write: (s) => written.push(s) }, silentLogger),
  );
  const res = await app.request('/v1/alertmanager', {
    method: 'POST',
    body: fixtureText('firing-kv-cache-critical'),
    headers: { 'content-type': 'application/json' },
  });
  expect(res.status).toBe(200);
  return written.join('\n');
}

describe('GRAFANA_URL in messages', () => {
  it('links the alert to the dashboard on its model and instance around its start', async () => {
    const start = Date.parse('2026-11-29T12:42:23.143Z');
    const text = await consoleText({ GRAFANA_URL: 'https://grafana.example.com/' });
    expect(text).toContain(
      `Grafana: https://grafana.example.com/d/vllm-fleet/vllm-fleet?var-model=qwen3-8b&var-instance=127.0.0.1%3A9800&from=${start - 3_600_000}&to=${start + 3_600_000}\n`,
    );
  });

  it('carries no Grafana link without it', async () => {
    expect(await consoleText({})).not.toContain('Grafana');
  });
});

describe('GRAFANA_URL in escalation messages', () => {
  it('links the escalated alert to the dashboard too', async () => {
    const target = await startLoopback();
    try {
      const h = await ackHarness(db, {
        ESCALATION_SLACK_WEBHOOK_URL: `${target.url}/services/T0/B0/escalation`,
        ESCALATION_DELAY_SECONDS: '3600',
        GRAFANA_URL: 'https://grafana.example.com',
      });
      await h.webhook(fixture('firing-kv-cache-critical'));
      h.runtime.timers!.close();
      expect(
        await checkEscalation(
          { fingerprint: '936e109b8c52c001', startsAt: '2026-11-29T12:42:23.143Z' },
          h.runtime.escalation!,
        ),
      ).toBe('escalated');
      const body = target.requests[0]!.body.toString('utf8');
      expect(body).toContain('🚨 UNACKNOWLEDGED');
      expect(body).toContain(
        '<https://grafana.example.com/d/vllm-fleet/vllm-fleet?var-model=qwen3-8b&amp;var-instance=127.0.0.1%3A9800&amp;from=',
      );
    } finally {
      await target.close();
    }
  });
});
