/**
 * The webhook receiver Lambda with our defaults (see `node-function.ts`: newest Node.js on
 * arm64, ESM bundled by local esbuild, a log group with retention), a public Function URL, plus
 * helpers that grant access and set the matching environment variable in one call so wiring cannot drift.
 *
 * The environment variable names are the contract of `shared/runtime/config.ts`.
 */
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Validations } from 'aws-cdk-lib';
import { FunctionUrlAuthType, type FunctionUrl, type Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Policy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { LogLevel } from '../shared/core/logger.js';
import { allowPublish, nodeFunction, REPO_ROOT, wireSettingsSecret, wireTable } from './node-function.js';
import { withChartRenderer } from './chart-asset.js';
import { LAMBDA_ROUTING_FILE, shipRoutingFile, type RoutingShipment } from './routing.js';
import { SECRET_SETTINGS } from '../shared/runtime/settings-secret.js';
import type { PrivateNetwork } from './vpc.js';

/**
 * Lambda timeout, seconds. It must cover the app's worst case, so Lambda never kills a request
 * half-way through fan-out: enrichment budget (ENRICHMENT_TIMEOUT_MS, 2 s) plus one channel's
 * attempts (DELIVERY_RETRIES + 1 = 3, each DELIVERY_TIMEOUT_MS = 5 s, plus backoff), about 20 s.
 * It must also stay well inside Alertmanager's budget for one notification including its own
 * retries, which is max(group_interval, 10 s) (0.25 has no per-webhook timeout): with the default
 * group_interval of 5 m, a request cut off at 30 s (the URL answers 502) still leaves time to retry.
 * @see https://github.com/prometheus/alertmanager/blob/main/notify/notify.go (MinTimeout)
 */
export const RECEIVER_TIMEOUT_SECONDS = 30;

/** Lambda memory, MiB. Also buys CPU: JSON, zod and card rendering are CPU-bound at cold start. */
export const RECEIVER_MEMORY_MIB = 512;

/** Keys of the settings secret (a JSON object); never set as plain environment variables. One list, read by the Lambda too. */
export const SECRET_SETTING_KEYS = SECRET_SETTINGS;

/** Non-secret settings, passed as plain environment variables when given. */
export interface PlainSettings {
  /** `PROMETHEUS_URL`: base URL of the Prometheus HTTP API used for enrichment. */
  prometheusUrl?: string;
  /** `ALERTMANAGER_URL`: base URL of Alertmanager (silence links, acks). */
  alertmanagerUrl?: string;
  /** `PUBLIC_URL`: this service's public base URL, e.g. a custom domain in front of the Function URL. */
  publicUrl?: string;
  /** `GRAFANA_URL`: Grafana's root URL (or the shipped dashboard's); messages link each alert to the dashboard there. */
  grafanaUrl?: string;
  /** `LOG_LEVEL`; the app defaults to `info`. */
  logLevel?: LogLevel;
  /** `SLACK_CHANNEL`: the channel id the Slack app posts to (its bot token is `SLACK_BOT_TOKEN` in the settings secret). */
  slackChannel?: string;
  /** `FEISHU_APP_ID`: the Feishu app (its `FEISHU_APP_SECRET` is in the settings secret). */
  feishuAppId?: string;
  /** `FEISHU_CHAT_ID`: the group the Feishu app sends its cards to. */
  feishuChatId?: string;
  /** `FEISHU_API_URL`: the Open API's base (Lark tenants: `https://open.larksuite.com/open-apis/`). */
  feishuApiUrl?: string;
  /** Every other non-secret setting given (context `settings`), by name: `{ TIME_ZONE: 'Asia/Shanghai' }`. */
  other?: Record<string, string>;
}

export interface AlertReceiverProps {
  /** Lambda entry module exporting `handler`. Default: `functions/lambda.ts` of this repository. */
  entry?: string;
  /** Non-secret settings; unset ones are left out of the environment. */
  settings?: PlainSettings;
  /**
   * A routing file (see docs/routing.md), checked at synth, bundled as `routing.yml` and named by
   * `ROUTING_FILE`; the function may publish to the SNS topics it names.
   */
  routingFile?: string;
  /** The VPC the function joins (context `vpcId`). */
  network?: PrivateNetwork;
}

/**
 * The receiver function, its log group and its Function URL.
 *
 * Authentication is not IAM (`FunctionUrlAuthType.NONE`): Alertmanager cannot sign SigV4 requests,
 * so the app checks the bearer token (`WEBHOOK_TOKEN`, from the settings secret).
 *
 * @example
 * new AlertReceiver(this, 'Receiver', { settings: { prometheusUrl } })
 *   .useTable(table).useTopic(topic).useSettingsSecret(secret);
 */
export class AlertReceiver extends Construct {
  readonly function: LambdaFunction;
  readonly logGroup: LogGroup;
  readonly functionUrl: FunctionUrl;
  /** The Alertmanager webhook endpoint: the Function URL (ends in `/`) + `v1/alertmanager`. */
  readonly webhookUrl: string;
  /** The shipped routing file, when one was given. */
  readonly routing?: RoutingShipment;

  constructor(scope: Construct, id: string, props: AlertReceiverProps = {}) {
    super(scope, id);
    this.routing = props.routingFile ? shipRoutingFile(props.routingFile) : undefined;
    const routingEnv: Record<string, string> = this.routing ? { ROUTING_FILE: LAMBDA_ROUTING_FILE } : {};
    ({ function: this.function, logGroup: this.logGroup } = nodeFunction(this, 'Function', {
      entry: props.entry ?? `${REPO_ROOT}functions/lambda.ts`,
      memoryMiB: RECEIVER_MEMORY_MIB,
      timeoutSeconds: RECEIVER_TIMEOUT_SECONDS,
      environment: { ...plainEnvironment(props.settings ?? {}), ...routingEnv },
      // The chart renderer is a file of its own in the asset, loaded on the first chart request.
      commandHooks: withChartRenderer(this.routing?.commandHooks),
      network: props.network,
    }));
    if (this.routing?.publish) this.function.addToRolePolicy(this.routing.publish);
    Validations.of(this.function).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        "Its Function URL invokes it synchronously (a failed request answers 5xx so Alertmanager retries it); when the stack subscribes it to AMP's SNS topic, failed asynchronous invocations go to the on-failure destination (the Amp/FailedEvents queue, which keeps the error with the event), so a dead-letter queue would only duplicate it.",
    });
    // "Acknowledge all N" goes on after the answer as asynchronous invocations of this function, step by
    // step (shared/ack/set-job.ts). A policy of its own: in the role's default policy the function's own
    // ARN would make the function depend on itself.
    new Policy(this, 'InvokeSelf', {
      roles: [this.function.role!],
      statements: [new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.function.functionArn] })],
    });
    this.functionUrl = this.function.addFunctionUrl({ authType: FunctionUrlAuthType.NONE });
    this.webhookUrl = `${this.functionUrl.url}v1/alertmanager`;
  }

  /** Allows the item actions the stores send (`TABLE_ACTIONS`) on the dedupe table and sets `TABLE_NAME`. */
  useTable(table: ITable): this {
    wireTable(this.function, table);
    return this;
  }

  /** Grants `sns:Publish` on the topic and sets `SNS_TOPIC_ARN`. */
  useTopic(topic: ITopic): this {
    allowPublish(this.function, topic);
    this.function.addEnvironment('SNS_TOPIC_ARN', topic.topicArn);
    return this;
  }

  /**
   * Allows reading the settings secret and sets `SETTINGS_SECRET_ARN`; the function reads the
   * secret (a JSON object with any of {@link SECRET_SETTING_KEYS}) at cold start.
   */
  useSettingsSecret(secret: ISecret): this {
    wireSettingsSecret(this.function, secret);
    return this;
  }
}

/** Maps the given settings to their environment variable names, leaving out unset ones (`other`'s are kept as given). */
export function plainEnvironment(settings: PlainSettings): Record<string, string> {
  const pairs: [string, string | undefined][] = [
    ['PROMETHEUS_URL', settings.prometheusUrl],
    ['ALERTMANAGER_URL', settings.alertmanagerUrl],
    ['PUBLIC_URL', settings.publicUrl],
    ['GRAFANA_URL', settings.grafanaUrl],
    ['LOG_LEVEL', settings.logLevel],
    ['SLACK_CHANNEL', settings.slackChannel],
    ['FEISHU_APP_ID', settings.feishuAppId],
    ['FEISHU_CHAT_ID', settings.feishuChatId],
    ['FEISHU_API_URL', settings.feishuApiUrl],
  ];
  const given = pairs.filter((p): p is [string, string] => p[1] !== undefined && p[1] !== '');
  // Context `settings` as given: "" means something there (`HEARTBEAT_ALERTNAME=""` turns heartbeats off).
  return Object.fromEntries([...given, ...Object.entries(settings.other ?? {})]);
}
