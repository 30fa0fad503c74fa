/**
 * Defaults for the AWS SDK clients the receiver and the escalation check create (DynamoDB,
 * Secrets Manager, EventBridge Scheduler). The SDK's HTTP handler has no request time-out by
 * default: a hung call would hold the request until Lambda kills it, after the sends but before
 * the delivery ledger is written. Time-outs make such a call fail, and the SDK's own retries
 * (3 attempts) try again within the Lambda's 30 s.
 *
 * @see https://docs.aws.amazon.com/sdk-for-javascript/v3/developer-guide/node-configuring-maxsockets.html
 */
export const AWS_CLIENT_DEFAULTS = {
  requestHandler: {
    /** Milliseconds to establish a connection. */
    connectionTimeout: 1_000,
    /** Milliseconds of socket inactivity before a request fails. */
    requestTimeout: 3_000,
    /** Fail the request at the time-out (the handler otherwise only logs a warning). */
    throwOnRequestTimeout: true,
  },
} as const;
