import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { createAckRuntime } from '../../../shared/runtime/ack.js';
import { loadConfig } from '../../../shared/runtime/config.js';
import { createLogger } from '../../../shared/core/logger.js';

const dynamodb = new DynamoDBClient({ region: 'local', credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
const config = loadConfig({
  ESCALATION_SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T/B/escalation',
  PUBLIC_URL: 'https://alerts.example.com',
  ACK_SECRET: 'a'.repeat(32),
});

describe('createAckRuntime escalation scheduling', () => {
  it('uses in-process timers for npm start', () => {
    const runtime = createAckRuntime(
      config,
      { dynamodb },
      [],
      createLogger('error', () => {}),
    );
    expect(runtime.timers).toBeDefined();
    expect(runtime.tracker.deps.escalation).toBeDefined();
  });

  it('turns escalation off, with a warning, where timers would not survive (Lambda without EventBridge Scheduler)', () => {
    const lines: string[] = [];
    const runtime = createAckRuntime(
      config,
      { dynamodb, inProcessTimers: false },
      [],
      createLogger('warn', (l) => lines.push(l)),
    );
    expect(runtime.timers).toBeUndefined();
    expect(runtime.tracker.deps.escalation).toBeUndefined();
    expect(lines.map((l) => JSON.parse(l).event)).toEqual(['escalation off']);
    expect(lines.join('')).not.toContain('hooks.slack.com');
  });
});
