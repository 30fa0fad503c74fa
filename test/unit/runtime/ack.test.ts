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
    const runtime = createAckRuntime(config, { dynamodb }, [], { logger: createLogger('error', () => {}) });
    expect(runtime.timers).toBeDefined();
    expect(runtime.tracker.deps.escalation).toBeDefined();
  });

  it('turns escalation off, with a warning, where timers would not survive (Lambda without EventBridge Scheduler)', () => {
    const lines: string[] = [];
    const runtime = createAckRuntime(config, { dynamodb, inProcessTimers: false }, [], {
      logger: createLogger('warn', (l) => lines.push(l)),
    });
    expect(runtime.timers).toBeUndefined();
    expect(runtime.tracker.deps.escalation).toBeUndefined();
    expect(lines.map((l) => JSON.parse(l).event)).toEqual(['escalation off']);
    expect(lines.join('')).not.toContain('hooks.slack.com');
  });
});

describe('createAckRuntime follow-up retries in Lambda', () => {
  const functionArn = () => 'arn:aws:lambda:eu-west-1:123456789012:function:receiver';
  const wiring = {
    FOLLOW_UP_SCHEDULE_GROUP: 'follow-ups',
    FOLLOW_UP_ROLE_ARN: 'arn:aws:iam::123456789012:role/follow-up-scheduler',
  };
  const links = { PUBLIC_URL: 'https://alerts.example.com', ACK_SECRET: 'a'.repeat(32) };
  const events = (env: Record<string, string>, clients: { functionArn?: () => string }) => {
    const lines: string[] = [];
    const runtime = createAckRuntime(loadConfig(env), { dynamodb, inProcessTimers: false, ...clients }, [], {
      logger: createLogger('warn', (l) => lines.push(l)),
    });
    return { runtime, events: lines.map((l) => JSON.parse(l).event) };
  };

  it('go to EventBridge Scheduler when the stack set the wiring: a run for the schedules, no timers', () => {
    const { runtime, events: logged } = events({ ...links, ...wiring }, { functionArn });
    expect(runtime.runFollowUp).toBeDefined();
    expect(runtime.page?.followUps).toBeDefined();
    expect(runtime.followUpTimers).toBeUndefined();
    expect(logged).toEqual([]);
  });

  it('are off, said once at cold start, in a Lambda that acknowledges without the wiring', () => {
    const { runtime, events: logged } = events(links, { functionArn });
    expect(runtime.runFollowUp).toBeUndefined();
    expect(runtime.page?.followUps).toBeUndefined();
    expect(logged).toEqual(['follow-up retries off']);
  });

  it('are not mentioned where nothing is acknowledged (no links) or nothing owns acknowledgements (the check)', () => {
    expect(events({}, { functionArn }).events).toEqual([]);
    expect(events(links, {}).events).toEqual([]);
  });
});
