/**
 * The event of one alert-set step when it runs as its own asynchronous Lambda invocation
 * (`shared/ack/set-job.ts`): `{"ackSetStep": "<job id>"}`. Apart from the step's code so that the Lambda
 * entry can tell the event from others without loading it.
 */

/** The step event for job `jobId`. */
export function ackSetStepEvent(jobId: string): { ackSetStep: string } {
  return { ackSetStep: jobId };
}

/** Whether `event` is a step event (an object whose `ackSetStep` is a non-empty string). */
export function isAckSetStep(event: unknown): event is { ackSetStep: string } {
  const step = (event as { ackSetStep?: unknown } | null)?.ackSetStep;
  return typeof step === 'string' && step.length > 0 && step.length <= 256;
}
