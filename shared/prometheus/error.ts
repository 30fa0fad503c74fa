/** The one error type of the Prometheus client. */
import { PipelineError } from '../core/errors.js';

/**
 * A failed query.
 * `errorType` is Prometheus's own (`bad_data`, `execution`, `timeout`, `canceled`, `internal`,
 * `unavailable`, `not_found`), or one of ours: `network` (no HTTP answer: refused, reset, DNS),
 * `timeout` also when our own per-query time-out fired before any answer, `bad_response` (the body
 * is not the API's JSON envelope, or not the expected result type), `redirect` (a 3xx, never followed),
 * `too_large` (the answer is over the client's size limit; not read on).
 * `httpStatus` is set whenever an HTTP answer arrived; `warnings` holds the API's `warnings` when
 * the error envelope carried some.
 * @see https://prometheus.io/docs/prometheus/latest/querying/api/#format-overview
 */
export class PrometheusError extends PipelineError {
  readonly errorType: string;
  readonly httpStatus?: number;
  readonly warnings: string[];
  constructor(
    message: string,
    options: { errorType: string; httpStatus?: number; warnings?: string[]; cause?: unknown },
  ) {
    super(message, options.errorType, { cause: options.cause });
    this.name = 'PrometheusError';
    this.errorType = options.errorType;
    this.httpStatus = options.httpStatus;
    this.warnings = options.warnings ?? [];
  }
}
