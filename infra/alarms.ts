/**
 * What the ops alarms watch, and at which threshold. Most thresholds are 1: each count means an
 * alert was lost, late, or in danger (Alertmanager drops a 4xx; a throttled Function URL answers
 * 429, a 4xx), so there is no "normal" background rate to tolerate. The pipeline's own metrics
 * (namespace {@link METRICS_NAMESPACE}, no dimensions) follow the metrics contract emitted as EMF.
 */
import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { ALARM_PERIOD_MINUTES, type Operations } from './operations.js';

const period = Duration.minutes(ALARM_PERIOD_MINUTES);

/** CloudWatch namespace of the pipeline's own metrics (EMF); the names match Prometheus's `/metrics`. */
export const METRICS_NAMESPACE = 'LlmAlertPipeline';

/** Duration alarm at this share of the time-out (ratio 0–1): an invocation near it is about to be cut off mid-fan-out. */
export const DURATION_ALARM_RATIO = 0.8;

/** The receiver's Function URL: 5xx (Alertmanager retries: late) and 4xx (Alertmanager drops: lost). */
export function watchFunctionUrl(ops: Operations, fn: IFunction): void {
  ops.watch('WebhookUrl', {
    '5xx': {
      metric: fn.metric('Url5xxCount', { statistic: 'Sum', period }),
      threshold: 1,
      description:
        'The webhook answered 5xx: Alertmanager retries, so those alerts are late and lost if the retries run out. The receiver logs each failure with its cause (a channel, DynamoDB, a time-out).',
    },
    '4xx': {
      // Less the internet noise the receiver answered 4xx (no token, unknown paths without our token):
      // scanners on a public URL lose no alert and must not bury the signal this alarm exists for.
      metric: new MathExpression({
        expression: 'FILL(url4xx, 0) - FILL(noise, 0)',
        usingMetrics: {
          url4xx: fn.metric('Url4xxCount', { statistic: 'Sum', period }),
          noise: new Metric({
            namespace: METRICS_NAMESPACE,
            metricName: 'llm_alert_pipeline_unsolicited_requests_total',
            statistic: 'Sum',
            period,
          }),
        },
        period,
      }),
      threshold: 1,
      description:
        'The webhook answered 4xx to a sender of ours (internet noise without our token is taken out): Alertmanager never retries these, so the alerts in those requests are lost (401: wrong WEBHOOK_TOKEN; 429: throttled, see the Throttles alarm; 400/413: a payload refused; 404: a receiver URL with a wrong path). The receiver logs each with its reason.',
    },
  });
}

/**
 * Errors, throttles and duration near the time-out of one function.
 * @param alarms.group the alarms' group (names them and the function in their descriptions)
 * @param alarms.timeoutSeconds the function's time-out, seconds
 * @param alarms.throttled what a throttle means for this function (synchronous callers see 429, async ones are
 *   retried)
 */
export function watchFunction(
  ops: Operations,
  fn: IFunction,
  { group, timeoutSeconds, throttled }: { group: string; timeoutSeconds: number; throttled: string },
): void {
  ops.watch(group, {
    Errors: {
      metric: fn.metricErrors({ statistic: 'Sum', period }),
      threshold: 1,
      description: `${group} threw or timed out; its log group has the error line (every line carries the awsRequestId).`,
    },
    Throttles: {
      metric: fn.metricThrottles({ statistic: 'Sum', period }),
      threshold: 1,
      description: `Lambda refused to run ${group} for lack of concurrency: ${throttled}`,
    },
    Duration: {
      metric: fn.metricDuration({ statistic: 'Maximum', period }),
      threshold: timeoutSeconds * 1000 * DURATION_ALARM_RATIO,
      description: `An invocation of ${group} took ${DURATION_ALARM_RATIO * 100}% of its ${timeoutSeconds} s time-out or more; at the time-out Lambda kills it mid-delivery.`,
    },
  });
}

/**
 * Any message in a queue that only ever receives failures.
 * @param alarm.group the alarm's group (names it and the queue in its description)
 * @param alarm.holds what the queue holds, as a phrase
 * @param alarm.meaning what a message there means and what to do (default: the escalation check's)
 */
export function watchQueue(
  ops: Operations,
  queue: IQueue,
  {
    group,
    holds,
    meaning = 'a critical alert may not have escalated. Each message keeps the job ({fingerprint, startsAt}); look at it, then delete it.',
  }: { group: string; holds: string; meaning?: string },
): void {
  ops.watch(group, {
    Depth: {
      metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period }),
      threshold: 1,
      description: `${group} holds ${holds}: ${meaning}`,
    },
  });
}

/** Tries of kept acknowledgement follow-ups EventBridge Scheduler could not invoke (`infra/follow-ups.ts`). */
export function watchFollowUps(ops: Operations, followUps: { scheduleDeadLetters: IQueue }): void {
  watchQueue(ops, followUps.scheduleDeadLetters, {
    group: 'FollowUpScheduleDeadLetters',
    holds: 'acknowledgement follow-up tries EventBridge Scheduler could not invoke',
    meaning:
      'a thread, card or incident may still show an alert as unacknowledged. Each message keeps {followUp: id}; look at it, then delete it.',
  });
}

/**
 * AMP's way in: its topic could not deliver to the receiver, SNS events that failed after Lambda's
 * retries or could not be delivered at all (both keep the SNS message), and bodies delivered unparsed.
 */
export function watchAmp(ops: Operations, amp: { topic: ITopic; failedEvents: IQueue; undeliverable: IQueue }): void {
  const redrive =
    'those AMP alerts reached no channel. Each message keeps the SNS event with AMP\'s message; fix the cause (the receiver logs "AMP message not delivered" with it), then re-invoke the receiver with the event (docs/amp.md, Failures) and delete the message.';
  watchQueue(ops, amp.failedEvents, {
    group: 'AmpFailedEvents',
    holds: "SNS events from AMP the receiver still failed on after Lambda's retries",
    meaning: redrive,
  });
  watchQueue(ops, amp.undeliverable, {
    group: 'AmpUndeliverable',
    holds: 'AMP messages SNS could not deliver to the receiver',
    meaning: redrive,
  });
  watchTopic(ops, 'AmpTopic', amp.topic);
  ops.watch('Amp', {
    Unparsed: {
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: 'llm_alert_pipeline_amp_messages_total',
        dimensionsMap: { body: 'unparsed' },
        statistic: 'Sum',
        period,
      }),
      threshold: 1,
      description:
        'An AMP message body could not be parsed: it was delivered as raw text in an AMPUnparsedMessage alert (no dedupe by alert, no enrichment). The receiver logs "AMP message not parsed" with the reason; use the template in infra/amp/alertmanager-definition.yml.',
    },
  });
}

/** Notifications SNS could not deliver to a subscriber of the topic. */
export function watchTopic(ops: Operations, group: string, topic: ITopic): void {
  ops.watch(group, {
    NotificationsFailed: {
      metric: topic.metricNumberOfNotificationsFailed({ statistic: 'Sum', period }),
      threshold: 1,
      description: `SNS could not deliver messages of ${group} to a subscriber (after SNS's own retries): whoever subscribed there missed alerts.`,
    },
  });
}

/** DynamoDB throttling the dedupe table: claims fail, the webhook answers 5xx. */
export function watchTable(ops: Operations, table: ITable): void {
  const throttled = 'claims and ledger writes fail, the webhook answers 5xx and Alertmanager retries (late alerts).';
  ops.watch('DedupeTable', {
    ReadThrottles: {
      metric: table.metric('ReadThrottleEvents', { statistic: 'Sum', period }),
      threshold: 1,
      description: `DynamoDB throttled reads of the dedupe table: ${throttled}`,
    },
    WriteThrottles: {
      metric: table.metric('WriteThrottleEvents', { statistic: 'Sum', period }),
      threshold: 1,
      description: `DynamoDB throttled writes to the dedupe table: ${throttled}`,
    },
  });
}

/** The pipeline's own metrics: delivery failures and unauthenticated webhook requests. */
export function watchPipeline(ops: Operations): void {
  const metric = (metricName: string) =>
    new Metric({ namespace: METRICS_NAMESPACE, metricName, statistic: 'Sum', period });
  ops.watch('Pipeline', {
    DeliveryFailures: {
      metric: metric('llm_alert_pipeline_notifications_failed'),
      threshold: 1,
      description:
        'A channel (Slack, Feishu, SNS) failed after its retries; the webhook answered 502 and Alertmanager retries that channel only. The receiver logs "channel failed" with the reason.',
    },
    Unauthenticated: {
      metric: metric('llm_alert_pipeline_webhook_wrong_token_total'),
      threshold: 1,
      description:
        'Webhook requests carrying a bearer token that is not WEBHOOK_TOKEN (nor WEBHOOK_TOKEN_PREVIOUS) were refused with 401, which Alertmanager does not retry: an Alertmanager with a stale token loses every alert. Requests without any token (internet noise on the public URL) are counted apart, in llm_alert_pipeline_unsolicited_requests_total.',
    },
  });
}

/**
 * An Alertmanager cluster's heartbeat stopped, or none was ever received a full timeout after the first
 * check (`llm_alert_pipeline_heartbeat_missing`, 0/1, from the heartbeat check); and heartbeats refused for
 * lack of room (`heartbeats_ignored_total{reason="too_many"}`): a cluster the switch does not watch.
 * @param checkDeployed whether the stack runs the heartbeat check on a schedule: then no data means the
 *   check itself stopped, which is breaching; without it the alarm waits for data instead of alarming forever
 */
export function watchHeartbeat(ops: Operations, { checkDeployed }: { checkDeployed: boolean }): void {
  ops.watch('Heartbeat', {
    Missing: {
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: 'llm_alert_pipeline_heartbeat_missing',
        statistic: 'Maximum',
        period,
      }),
      threshold: 1,
      treatMissingData: checkDeployed ? TreatMissingData.BREACHING : TreatMissingData.MISSING,
      description:
        "An Alertmanager cluster's heartbeat (its always-firing Watchdog alert, from any peer) stopped arriving: that cluster, or its path to this webhook, is down and none of its alerts reach anyone. Or no heartbeat was ever received: the log line 'heartbeat never received' names HEARTBEAT_ALERTNAME and the route to fix.",
    },
    NotWatched: {
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: 'llm_alert_pipeline_heartbeats_ignored_total',
        dimensionsMap: { reason: 'too_many' },
        statistic: 'Sum',
        period,
      }),
      threshold: 1,
      description:
        "Heartbeat alerts arrived that the dead-man's switch does not watch: HEARTBEAT_MAX_CLUSTERS are watched already, so a new Alertmanager or Prometheus is unprotected. Alerts named Watchdog posted to an Alertmanager's API (no token needed) take places too. The log line 'heartbeat not recorded' names them; set HEARTBEAT_FINGERPRINTS (-c settings) to the heartbeats you expect.",
    },
  });
}
