/**
 * EventBridge Scheduler's one-time schedules (`shared/escalation/eventbridge-scheduler.ts`), their code and
 * SDK client loaded on the first schedule, not at cold init: a webhook of warnings or duplicates never
 * needs them. One client per process, shared by escalation checks and kept follow-ups.
 */
import type { SchedulerClient } from '@aws-sdk/client-scheduler';
import type { OneTimeSchedules, OneTimeScheduleTarget } from '../escalation/eventbridge-scheduler.js';
import { AWS_CLIENT_DEFAULTS } from './aws-clients.js';

/** One-time schedules invoking `target`'s function. @throws when the code or the client cannot be loaded */
export type LoadSchedules = (target: OneTimeScheduleTarget) => Promise<OneTimeSchedules>;

/**
 * @param client a `SchedulerClient` (tests); default: one with the SDK's own region settings, made on first use
 */
export function schedulesLoader(client?: Pick<SchedulerClient, 'send'>): LoadSchedules {
  let loading: Promise<Pick<SchedulerClient, 'send'>> | undefined;
  const loadClient = () => {
    loading ??= client
      ? Promise.resolve(client)
      : import('@aws-sdk/client-scheduler').then(
          (sdk) => new sdk.SchedulerClient(AWS_CLIENT_DEFAULTS),
          (err: unknown) => {
            loading = undefined;
            throw err;
          },
        );
    return loading;
  };
  return async (target) => {
    const [{ OneTimeSchedules }, sdkClient] = await Promise.all([
      import('../escalation/eventbridge-scheduler.js'),
      loadClient(),
    ]);
    return new OneTimeSchedules(sdkClient, target);
  };
}
