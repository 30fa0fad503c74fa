/**
 * The event EventBridge Scheduler sends to the receiver function to run the heartbeat check. Its own
 * module so the CDK app can name it without loading the pipeline.
 */
export const HEARTBEAT_CHECK_EVENT = { source: 'llm-alert-pipeline', action: 'heartbeat-check' } as const;

/** Whether a Lambda event is {@link HEARTBEAT_CHECK_EVENT} (anything else is an HTTP request). */
export function isHeartbeatCheck(event: unknown): boolean {
  const e = event as Partial<typeof HEARTBEAT_CHECK_EVENT> | null;
  return (
    typeof e === 'object' &&
    e !== null &&
    e.source === HEARTBEAT_CHECK_EVENT.source &&
    e.action === HEARTBEAT_CHECK_EVENT.action
  );
}
