/**
 * The one error family of the pipeline: every error it throws on purpose is a {@link PipelineError}
 * with a `reason`, a short word from a closed set that a caller can branch on and a metric can count
 * (as Alertmanager labels `notifications_failed_total{reason}`), and, when it wraps another error,
 * that error as `cause` (ES2022 `Error.cause`, which Node prints and our logger keeps).
 * `cause` is set only where the wrapped error cannot carry a secret (Alertmanager and AWS SDK errors),
 * never around a webhook request, whose errors may quote its URL; the logger prints name and message only.
 * Subclasses set `name` explicitly: the Lambda bundle is minified, so class names are not kept.
 * @see https://developer.mozilla.org/en-US/docs/Web/JavaScript/Reference/Global_Objects/Error/cause
 */
export class PipelineError<Reason extends string = string> extends Error {
  /**
   * @param message what went wrong, safe to log (never a secret)
   * @param reason the kind of failure, from the subclass's closed set
   * @param options `cause`: the error this one wraps
   */
  constructor(
    message: string,
    readonly reason: Reason,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PipelineError';
  }
}
