import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import { describe, expect, it } from 'vitest';
import { followUpEvent, isFollowUpEvent } from '../../../shared/ack/follow-up-event.js';
import { FollowUpSchedules, followUpFireAtMs, followUpScheduleName } from '../../../shared/ack/follow-up-schedules.js';
import { OneTimeSchedules } from '../../../shared/escalation/eventbridge-scheduler.js';
import { unqualifiedFunctionArn } from '../../../shared/runtime/follow-ups.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const FUNCTION = 'arn:aws:lambda:eu-west-1:123456789012:function:receiver';

/** A client that records what it is sent, and answers as told. */
function recording(answer: (input: Record<string, unknown>) => Promise<unknown> = async () => ({})) {
  const sent: Record<string, unknown>[] = [];
  const client = {
    send: async (command: { input: Record<string, unknown> }) => {
      sent.push(command.input);
      return answer(command.input);
    },
  } as unknown as Pick<SchedulerClient, 'send'>;
  return { client, sent };
}

describe('planning a kept follow-up’s next try as a one-time schedule', () => {
  it('fires at the whole second at or after the try is due, never before it', () => {
    expect(followUpFireAtMs(Date.parse('2026-12-02T10:00:00.000Z'))).toBe(Date.parse('2026-12-02T10:00:00.000Z'));
    expect(followUpFireAtMs(Date.parse('2026-12-02T10:00:00.001Z'))).toBe(Date.parse('2026-12-02T10:00:01.000Z'));
    expect(followUpFireAtMs(Date.parse('2026-12-02T10:00:00.999Z'))).toBe(Date.parse('2026-12-02T10:00:01.000Z'));
  });

  it('names each try apart (the next try never collides with the schedule still firing), within 64 characters', () => {
    const due = Date.parse('2026-12-02T10:00:30.250Z');
    const name = followUpScheduleName(ID, due);
    expect(name).toBe(`fu-${ID}-${Math.ceil(due / 1000)}`);
    expect(name).toMatch(/^[0-9A-Za-z_.-]{1,64}$/);
    expect(followUpScheduleName(ID, due + 1000)).not.toBe(name);
    expect(followUpScheduleName(ID, due + 100)).toBe(name);
    expect(followUpScheduleName('a/b c'.repeat(20), due)).toMatch(/^fu-a_b_c[0-9A-Za-z_.-]{1,58}$/);
  });

  it('creates the schedule in the group, invoking this function with {followUp}, deleted after it ran', async () => {
    const { client, sent } = recording();
    const target = {
      groupName: 'follow-ups',
      functionArn: () => FUNCTION,
      roleArn: 'arn:aws:iam::123456789012:role/follow-up-scheduler',
      deadLetterQueueArn: 'arn:aws:sqs:eu-west-1:123456789012:follow-up-dead-letters',
    };
    await new FollowUpSchedules(new OneTimeSchedules(client, target)).schedule(
      ID,
      Date.parse('2026-12-02T10:00:30.250Z'),
    );
    expect(sent).toEqual([
      {
        Name: `fu-${ID}-${Date.parse('2026-12-02T10:00:31Z') / 1000}`,
        GroupName: 'follow-ups',
        ScheduleExpression: 'at(2026-12-02T10:00:31)',
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: 'DELETE',
        Target: {
          Arn: FUNCTION,
          RoleArn: target.roleArn,
          Input: JSON.stringify({ followUp: ID }),
          RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 10 },
          DeadLetterConfig: { Arn: target.deadLetterQueueArn },
        },
        Description: `llm-alert-pipeline acknowledgement follow-up ${ID}, tried again`,
      },
    ]);
  });

  it('takes a schedule of the same try that exists (an HA peer made it) as done; throws other errors', async () => {
    const conflict = Object.assign(new Error('exists'), { name: 'ConflictException' });
    const target = { groupName: 'g', functionArn: FUNCTION, roleArn: 'arn:aws:iam::123456789012:role/r' };
    const peer = recording(async () => Promise.reject(conflict));
    await expect(new FollowUpSchedules(new OneTimeSchedules(peer.client, target)).schedule(ID, 0)).resolves.toBe(
      undefined,
    );
    const denied = recording(async () => Promise.reject(Object.assign(new Error('no'), { name: 'AccessDenied' })));
    await expect(new FollowUpSchedules(new OneTimeSchedules(denied.client, target)).schedule(ID, 0)).rejects.toThrow(
      'no',
    );
  });

  it('tells its event from the others the function gets', () => {
    expect(isFollowUpEvent(followUpEvent(ID))).toBe(true);
    for (const other of [
      { ackSetStep: ID },
      { followUp: '' },
      { followUp: 7 },
      null,
      'x',
      { followUp: 'x'.repeat(257) },
    ])
      expect(isFollowUpEvent(other)).toBe(false);
  });

  it('names the function without a version or alias qualifier, and refuses an invocation that did not say', () => {
    expect(unqualifiedFunctionArn(FUNCTION)).toBe(FUNCTION);
    expect(unqualifiedFunctionArn(`${FUNCTION}:prod`)).toBe(FUNCTION);
    expect(unqualifiedFunctionArn(`${FUNCTION}:7`)).toBe(FUNCTION);
    expect(() => unqualifiedFunctionArn(undefined)).toThrow(/ARN is unknown/);
    expect(() => unqualifiedFunctionArn('arn:aws:iam::123456789012:role/x')).toThrow(/ARN is unknown/);
  });
});
