/**
 * EventBridge Scheduler adapter of {@link FollowUpScheduler} (Lambda, where a frozen function loses
 * timers): each try of a kept follow-up is one one-time schedule in the stack's follow-up group, invoking
 * the function that owns acknowledgements (the receiver) with {@link followUpEvent} at the try's time
 * and deleting itself after it ran. The schedule ops are escalation's ({@link OneTimeSchedules}).
 * @see https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
 */
import { MAX_NAME_CHARS, type OneTimeSchedules } from '../escalation/eventbridge-scheduler.js';
import { followUpEvent } from './follow-up-event.js';
import type { FollowUpScheduler } from './follow-ups.js';

/**
 * `fu-<id>-<due epoch seconds>`, other characters replaced by `_`, cut to 64: one name per try, so the
 * next try's schedule never collides with the one still firing (deleted only after it ran), while a
 * second schedule of the same try (an HA peer, a retried call) is refused as a conflict.
 */
export function followUpScheduleName(id: string, dueAtMs: number): string {
  return `fu-${id.replace(/[^0-9A-Za-z_.-]/g, '_')}-${Math.ceil(dueAtMs / 1000)}`.slice(0, MAX_NAME_CHARS);
}

/**
 * When the schedule of a try due at `dueAtMs` fires: the next whole second (Scheduler's `at()` takes
 * whole seconds; cut down, it would fire before the follow-up is due, and the try would find it not due).
 */
export function followUpFireAtMs(dueAtMs: number): number {
  return Math.ceil(dueAtMs / 1000) * 1000;
}

export class FollowUpSchedules implements FollowUpScheduler {
  /** @param schedules in the follow-up group, invoking the function that owns acknowledgements */
  constructor(private readonly schedules: OneTimeSchedules) {}

  /** @throws the SDK's error, except `ConflictException` (this try is scheduled already) */
  async schedule(id: string, dueAtMs: number): Promise<void> {
    await this.schedules.create({
      name: followUpScheduleName(id, dueAtMs),
      dueAtMs: followUpFireAtMs(dueAtMs),
      input: followUpEvent(id),
      description: `llm-alert-pipeline acknowledgement follow-up ${id}, tried again`,
    });
  }
}
