/**
 * The event of one try of a kept follow-up when EventBridge Scheduler runs it in Lambda
 * (`follow-up-schedules.ts`): `{"followUp": "<id>"}`. Apart from the follow-ups' code so that the Lambda
 * entry can tell the event from others without loading it.
 */

/** The event of a try of follow-up `id`. */
export function followUpEvent(id: string): { followUp: string } {
  return { followUp: id };
}

/** Whether `event` is a follow-up event (an object whose `followUp` is a non-empty string of at most 256). */
export function isFollowUpEvent(event: unknown): event is { followUp: string } {
  const id = (event as { followUp?: unknown } | null)?.followUp;
  return typeof id === 'string' && id.length > 0 && id.length <= 256;
}
