/**
 * Configuration, read once at start-up from environment variables and validated with zod.
 * Errors name the variable and never echo its value. Adapters receive this object; nothing
 * else reads `process.env`.
 *
 * The variable names are a public contract (users' Alertmanager configs and deployments use them):
 * add new ones, never rename or repurpose one.
 */
// zod/mini with English messages (`core/zod.ts`): classic zod would cost the receiver's cold init.
import * as z from '../core/zod.js';
import { webhookUrlProblem } from '../channels/settings.js';
import { TOPIC_ARN } from '../channels/sns/settings.js';
import type { RoutingConfig } from '../routing/load.js';
import { loadRoutingReader, routingReader } from './routing-reader.js';
import { Secret } from '../core/secret.js';
import { routingKeySchema } from '../channels/pagerduty/settings.js';
import { trimSettings, type SettingWarning } from './settings-whitespace.js';
import type { LogLevel } from '../core/logger.js';
import { PipelineError } from '../core/errors.js';
import { DEFAULT_DELIVERY_BUDGET_MS } from '../channels/deliver.js';
import { baseUrlProblem, optionalWholeNumber, pointInTime, positiveDecimal, wholeNumber } from './setting-rules.js';

/** An https URL; plain http is allowed only to loopback (local tests). The routing file applies the same rule. */
function webhookUrl() {
  return z.string().check(
    z.superRefine((s, ctx) => {
      const problem = webhookUrlProblem(s);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  );
}

/** Any http(s) URL (Prometheus, Alertmanager, the public URL of this service). */
function httpUrl() {
  const url = z.string().check(
    z.superRefine((s, ctx) => {
      let url: URL;
      try {
        url = new URL(s);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
        return;
      }
      if (!['http:', 'https:'].includes(url.protocol)) ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
      // fetch refuses URLs with user:password@, and the URL is logged at start: never carry credentials in it.
      else if (url.username || url.password) ctx.addIssue({ code: 'custom', message: 'must not contain credentials (user:password@)' });
    }),
  );
  return z.pipe(url, z.transform((s) => s.replace(/\/+$/, '')));
}

/** This service's public base URL: links append `/v1/ack/<token>` to it, so a query or fragment would break them. */
const publicUrl = () =>
  httpUrl().check(z.refine((s) => !/[?#]/.test(s), { message: 'must not have a query or fragment (links append /v1/ack/… to it); a path prefix is fine' }));

/** Grafana's root URL or a dashboard's URL: links set `var-…`, `from` and `to` in its query, so a fragment would hide them. */
const grafanaUrlSetting = () =>
  httpUrl().check(z.refine((s) => !s.includes('#'), { message: 'must not have a fragment (#…); a path prefix, a dashboard path /d/<uid> or a query such as ?orgId=2 is fine' }));

/** A Prometheus or Alertmanager base URL: not a UI page, an API path, a query or a fragment ({@link baseUrlProblem}). */
const baseUrl = (example: string) =>
  httpUrl().check(
    z.superRefine((s, ctx) => {
      const problem = baseUrlProblem(s, example);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  );

/** Longest time-out of one step of a group's delivery, milliseconds: the whole group's budget. */
const MAX_GROUP_STEP_MS = DEFAULT_DELIVERY_BUDGET_MS;
const WEEK_SECONDS = 7 * 24 * 3600;

const topicArn = () => z.string().check(z.regex(TOPIC_ARN, { message: 'must be an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)' }));

/** Unset or `""`: unset. */
const optional = <T extends z.ZodMiniType>(schema: T) => z.pipe(z.transform((v) => (v === '' ? undefined : v)), z.optional(schema));

/** A string matching `pattern`; `message` otherwise. */
const matching = (pattern: RegExp, message: string) => z.string().check(z.regex(pattern, { message }));


/** A token Alertmanager can carry in a bearer header: the characters of RFC 6750's b64token, as hono's bearerAuth checks them. */
export const webhookTokenSchema = z.string().check(
  z.minLength(16, { message: 'must be at least 16 characters' }),
  z.regex(/^[A-Za-z0-9._~+/-]+=*$/, { message: 'must use only the characters A-Z a-z 0-9 - . _ ~ + / (RFC 6750)' }),
);

/** `true` or `false` (unset: `false`). */
const flag = () =>
  z.pipe(
    z.pipe(z.transform((v) => (v === '' || v === undefined ? 'false' : v)), z.enum(['true', 'false'], { message: 'must be true or false' })),
    z.transform((v) => v === 'true'),
  );

const envSchema = z.object({
  PORT: wholeNumber(8080, 0, 65535, 'port', 'must be a port number 0–65535'),
  WEBHOOK_TOKEN: optional(webhookTokenSchema),
  WEBHOOK_TOKEN_PREVIOUS: optional(webhookTokenSchema),
  ALLOW_UNAUTHENTICATED: flag(),
  // Unset: `Watchdog`; set to "" to turn the dead-man's switch off (so '' is not "unset" here).
  HEARTBEAT_ALERTNAME: z.pipe(
    z.transform((v) => (v === undefined ? 'Watchdog' : v)),
    matching(/^([A-Za-z_:][A-Za-z0-9_:]*)?$/, 'must be an alert name (a Prometheus metric name), or "" to turn heartbeats off'),
  ),
  HEARTBEAT_TIMEOUT_SECONDS: wholeNumber(600, 1, WEEK_SECONDS, 'seconds'),
  PROMETHEUS_URL: optional(baseUrl('http://prometheus:9090')),
  SLACK_WEBHOOK_URL: optional(webhookUrl()),
  // The Slack app (shared/channels/slack): bot token, its channel, the interactivity signing secret.
  SLACK_BOT_TOKEN: optional(matching(/^xox[a-z]-[A-Za-z0-9-]{8,}$/, 'must be a Slack bot token (xoxb-…, from the app\'s OAuth & Permissions page)')),
  SLACK_CHANNEL: optional(matching(/^#?[A-Za-z0-9_.-]{1,80}$/, 'must be a Slack channel id (C0123456789) or name')),
  SLACK_SIGNING_SECRET: optional(z.string().check(z.minLength(16, { message: 'must be the app\'s signing secret (Basic Information page), at least 16 characters' }))),
  SLACK_API_URL: optional(webhookUrl()),
  FEISHU_WEBHOOK_URL: optional(webhookUrl()),
  FEISHU_SECRET: optional(z.string().check(z.minLength(1))),
  SNS_TOPIC_ARN: optional(topicArn()),
  // The `pagerduty` channel (shared/channels/pagerduty/settings.ts).
  PAGERDUTY_ROUTING_KEY: optional(routingKeySchema),
  PAGERDUTY_EVENTS_URL: optional(webhookUrl()),
  PUBLIC_URL: optional(publicUrl()),
  ACK_SECRET: optional(z.string().check(z.minLength(32, { message: 'must be at least 32 characters (e.g. the output of `openssl rand -hex 32`)' }))),
  ALERTMANAGER_URL: optional(baseUrl('http://alertmanager:9093')),
  // Messages and the acknowledgement page link each alert to the shipped dashboard there (shared/render/grafana.ts).
  GRAFANA_URL: optional(grafanaUrlSetting()),
  // Acknowledgement links and escalation (shared/ack).
  ACK_SECRET_PREVIOUS: optional(z.string().check(z.minLength(32, { message: 'must be at least 32 characters (e.g. the output of `openssl rand -hex 32`)' }))),
  ACK_SECRET_PREVIOUS_UNTIL: optional(pointInTime()),
  ACK_TOKEN_TTL_SECONDS: wholeNumber(WEEK_SECONDS, 1, 90 * 24 * 3600, 'seconds'),
  ESCALATION_DELAY_SECONDS: positiveDecimal(15 * 60, WEEK_SECONDS, 'seconds'),
  ESCALATION_SNS_TOPIC_ARN: optional(topicArn()),
  ESCALATION_SLACK_WEBHOOK_URL: optional(webhookUrl()),
  ESCALATION_SCHEDULE_GROUP: optional(matching(/^[0-9A-Za-z_.-]{1,64}$/, 'must be an EventBridge Scheduler group name')),
  ESCALATION_FUNCTION_ARN: optional(matching(/^arn:aws[a-z-]*:lambda:/, 'must be a Lambda function ARN')),
  ESCALATION_ROLE_ARN: optional(matching(/^arn:aws[a-z-]*:iam::\d{12}:role\//, 'must be an IAM role ARN')),
  ESCALATION_DEAD_LETTER_QUEUE_ARN: optional(matching(/^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}$/, 'must be an SQS queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME)')),
  // Channel instances and routes (shared/routing); read and checked here, once.
  ROUTING_FILE: optional(z.string()),
  TABLE_NAME: optional(matching(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a DynamoDB table name (3–255 of A-Z a-z 0-9 _ . -)')),
  LOG_LEVEL: z.pipe(z.transform((v) => (v === '' || v === undefined ? 'info' : v)), z.enum(['debug', 'info', 'warn', 'error'], { message: 'must be one of debug, info, warn, error' })),
  ENRICHMENT_TIMEOUT_MS: wholeNumber(2000, 1, MAX_GROUP_STEP_MS, 'milliseconds'),
  MEMORY_TREND_WINDOW_HOURS: positiveDecimal(6, 7 * 24, 'hours'),
  GPU_MEMORY_CAPACITY_MIB: optional(z.coerce.number({ message: 'must be a number' }).check(z.positive({ message: 'must be a positive number' }))),
  MEMORY_SERIES: optional(matching(/^[A-Za-z_:][A-Za-z0-9_:]*$/, 'must be a Prometheus metric name, e.g. process_resident_memory_bytes')),
  MEMORY_SERIES_UNIT: optional(z.enum(['bytes', 'KiB', 'MiB', 'GiB'], { message: 'must be one of bytes, KiB, MiB, GiB' })),
  PROMETHEUS_QUERY_TIMEOUT_MS: optionalWholeNumber(1, MAX_GROUP_STEP_MS, 'milliseconds'),
  DEDUPE_TTL_SECONDS: wholeNumber(30 * 24 * 3600, 1, 365 * 24 * 3600, 'seconds'),
  DEDUPE_LEASE_MS: wholeNumber(60_000, 1000, 3_600_000, 'milliseconds'),
  DELIVERY_TIMEOUT_MS: wholeNumber(5000, 1, MAX_GROUP_STEP_MS, 'milliseconds'),
  DELIVERY_RETRIES: wholeNumber(2, 0, 10, 'retries'),
});

export interface Config {
  /** HTTP port for `npm start`; 0 picks a free one. */
  port: number;
  /** Bearer token Alertmanager must send; unset: every protected route answers 503 unless {@link allowUnauthenticated}. */
  webhookToken?: Secret;
  /** The previous token, still accepted while Alertmanagers move to the new one (`WEBHOOK_TOKEN_PREVIOUS`). */
  webhookTokenPrevious?: Secret;
  /** `ALLOW_UNAUTHENTICATED=true`: serve without a token (never the default; `npm start` on loopback is allowed anyway). */
  allowUnauthenticated: boolean;
  /**
   * The dead-man's switch (`shared/heartbeat`): alerts named `alertname` are heartbeats, never sent
   * on; an Alertmanager silent for `timeoutSeconds` raises `AlertingPipelineHeartbeatMissing`.
   * Unset when `HEARTBEAT_ALERTNAME=""`.
   */
  heartbeat?: { alertname: string; timeoutSeconds: number };
  /** Base URL of the Prometheus HTTP API (no trailing slash). Unset: enrichment is unavailable. */
  prometheusUrl?: string;
  slack?: { webhookUrl: Secret };
  /**
   * The Slack app: `token` (`SLACK_BOT_TOKEN`) for the `slack` channel of `SLACK_CHANNEL` and for the
   * routing file's `slack-app` instances; `apiUrl` the Web API base ending in `/` (`SLACK_API_URL`, tests);
   * `signingSecret` turns on `POST /v1/slack/interactions`.
   */
  slackApp?: { token?: Secret; channel?: string; apiUrl?: string; signingSecret?: Secret };
  feishu?: { webhookUrl: Secret; secret?: Secret };
  sns?: { topicArn: string };
  /** `PAGERDUTY_ROUTING_KEY`: the `pagerduty` channel. */
  pagerduty?: { routingKey: Secret };
  /** `PAGERDUTY_EVENTS_URL`: the Events API v2 endpoint of every `pagerduty` instance; unset: PagerDuty's. */
  pagerdutyEventsUrl?: string;
  publicUrl?: string;
  ackSecret?: Secret;
  alertmanagerUrl?: string;
  /**
   * `GRAFANA_URL`: Grafana's root URL or the shipped dashboard's URL (no trailing slash); messages link
   * each alert to the dashboard there (`grafanaUrl` in `shared/render/grafana.ts`). Unset: no such link.
   */
  grafanaUrl?: string;
  /** The previous `ACK_SECRET`, accepted for links until `untilMs` (epoch ms, `ACK_SECRET_PREVIOUS_UNTIL`). */
  ackPreviousSecret?: { secret: Secret; untilMs: number };
  /** Lifetime of acknowledgement links, seconds. */
  ackTokenTtlSeconds: number;
  /** Escalation of unacknowledged critical alerts; unset when no target is configured. */
  escalation?: {
    /** How long an alert may stay unacknowledged, seconds. */
    delaySeconds: number;
    snsTopicArn?: string;
    slackWebhookUrl?: Secret;
    /** EventBridge Scheduler wiring (the CDK stack sets it); unset: in-process timers (`npm start`). */
    scheduler?: { groupName: string; functionArn: string; roleArn: string; deadLetterQueueArn?: string };
  };
  /** DynamoDB table; unset for `npm start` means an embedded dynalite table. */
  tableName?: string;
  logLevel: LogLevel;
  enrichment: {
    /** Whole-group enrichment budget, milliseconds. */
    timeoutMs: number;
    /** Window of the memory-leak regression, hours. */
    memoryTrendWindowHours: number;
    /** GPU memory capacity in MiB, overriding `DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE`. */
    gpuMemoryCapacityMiB?: number;
    /** Metric of the memory-leak trend (`MEMORY_SERIES`); unset means `DCGM_FI_DEV_FB_USED`. */
    memorySeries?: string;
    /** Unit of that metric's samples (`MEMORY_SERIES_UNIT`); unset means `bytes` for a `*_bytes` name, else `MiB`. */
    memorySeriesUnit?: 'bytes' | 'KiB' | 'MiB' | 'GiB';
    /** Time-out of each Prometheus query attempt, milliseconds (`PROMETHEUS_QUERY_TIMEOUT_MS`); unset means half the budget. */
    queryTimeoutMs?: number;
  };
  /**
   * The routing file (`ROUTING_FILE`): named channel instances and the routes that pick them per
   * alert. Unset: every configured channel (`slack`, `feishu`, `sns`) gets every alert.
   */
  routing?: RoutingConfig;
  /** How long a dedupe record is kept, seconds (DynamoDB TTL). */
  dedupeTtlSeconds: number;
  /**
   * How long a delivery excludes other deliverers of the same alert, milliseconds (`DEDUPE_LEASE_MS`):
   * a deliverer that dies holds its alerts that long before a retry repairs them. Keep it above the
   * whole delivery budget (20 s) and the Lambda time-out (30 s).
   */
  dedupeLeaseMs: number;
  delivery: {
    /** Per-request timeout towards a channel, milliseconds. */
    timeoutMs: number;
    /** Retries after the first attempt, per channel. */
    retries: number;
  };
  /** Settings that were adjusted (surrounding whitespace removed); the entry points log them at start. */
  warnings: SettingWarning[];
}

/** Thrown by {@link loadConfig}; `message` lists every bad setting as `NAME: problem`. */
export class ConfigError extends PipelineError<'invalid_configuration'> {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`, 'invalid_configuration');
    this.name = 'ConfigError';
  }
}

/**
 * {@link loadConfig}, after loading what it needs to read `ROUTING_FILE` when that is set (see
 * `routing-reader.ts`): what the entry points call.
 * @throws ConfigError as {@link loadConfig}
 */
export async function loadConfigWhenReady(raw: Record<string, string | undefined>): Promise<Config> {
  if (raw.ROUTING_FILE?.trim()) await loadRoutingReader();
  return loadConfig(raw);
}

/**
 * Validates the environment once. With `ROUTING_FILE` set, the routing reader must be loaded first
 * ({@link loadConfigWhenReady} does it; the test set-up loads it for every test file).
 * @param raw usually `process.env`
 * @returns the typed configuration, secrets wrapped in {@link Secret}; surrounding whitespace is removed
 *   from every setting and reported in `warnings` (see `settings-whitespace.ts`)
 * @throws ConfigError naming each bad variable (never its value)
 */
export function loadConfig(raw: Record<string, string | undefined>): Config {
  const { settings: env, warnings } = trimSettings(raw, settingNames(raw));
  // Parsed once per process: zod's compiled fast path (`new Function` per object schema) would cost more
  // to generate than it saves (~40 ms of a Lambda cold start for this schema, bench/floor.ts).
  const parsed = envSchema.safeParse(env, { jitless: true });
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  if (e.FEISHU_SECRET && !e.FEISHU_WEBHOOK_URL) problems.push('FEISHU_SECRET: set, but FEISHU_WEBHOOK_URL is not');
  if (e.WEBHOOK_TOKEN_PREVIOUS && !e.WEBHOOK_TOKEN) problems.push('WEBHOOK_TOKEN_PREVIOUS: set, but WEBHOOK_TOKEN is not (a rotation needs the new token too)');
  problems.push(...ackProblems(e), ...slackAppProblems(e));
  if (e.PROMETHEUS_QUERY_TIMEOUT_MS !== undefined && e.PROMETHEUS_QUERY_TIMEOUT_MS > e.ENRICHMENT_TIMEOUT_MS) {
    problems.push(`PROMETHEUS_QUERY_TIMEOUT_MS: must not exceed ENRICHMENT_TIMEOUT_MS (${e.ENRICHMENT_TIMEOUT_MS} ms), the budget of all queries of a group`);
  }
  const routing = loadRouting(e, env, problems);
  if (problems.length) throw new ConfigError(problems);
  const secret = (v: string | undefined) => (v === undefined ? undefined : new Secret(v));
  return {
    port: e.PORT,
    webhookToken: secret(e.WEBHOOK_TOKEN),
    webhookTokenPrevious: secret(e.WEBHOOK_TOKEN_PREVIOUS),
    allowUnauthenticated: e.ALLOW_UNAUTHENTICATED,
    heartbeat: e.HEARTBEAT_ALERTNAME ? { alertname: e.HEARTBEAT_ALERTNAME, timeoutSeconds: e.HEARTBEAT_TIMEOUT_SECONDS } : undefined,
    prometheusUrl: e.PROMETHEUS_URL,
    slack: e.SLACK_WEBHOOK_URL ? { webhookUrl: new Secret(e.SLACK_WEBHOOK_URL) } : undefined,
    slackApp: e.SLACK_BOT_TOKEN || e.SLACK_SIGNING_SECRET
      ? { token: secret(e.SLACK_BOT_TOKEN), channel: e.SLACK_CHANNEL, apiUrl: e.SLACK_API_URL && `${e.SLACK_API_URL.replace(/\/+$/, '')}/`, signingSecret: secret(e.SLACK_SIGNING_SECRET) }
      : undefined,
    feishu: e.FEISHU_WEBHOOK_URL ? { webhookUrl: new Secret(e.FEISHU_WEBHOOK_URL), secret: secret(e.FEISHU_SECRET) } : undefined,
    sns: e.SNS_TOPIC_ARN ? { topicArn: e.SNS_TOPIC_ARN } : undefined,
    pagerduty: e.PAGERDUTY_ROUTING_KEY ? { routingKey: new Secret(e.PAGERDUTY_ROUTING_KEY) } : undefined,
    pagerdutyEventsUrl: e.PAGERDUTY_EVENTS_URL,
    publicUrl: e.PUBLIC_URL,
    ackSecret: secret(e.ACK_SECRET),
    alertmanagerUrl: e.ALERTMANAGER_URL,
    grafanaUrl: e.GRAFANA_URL,
    ackPreviousSecret: e.ACK_SECRET_PREVIOUS && e.ACK_SECRET_PREVIOUS_UNTIL ? { secret: new Secret(e.ACK_SECRET_PREVIOUS), untilMs: e.ACK_SECRET_PREVIOUS_UNTIL } : undefined,
    ackTokenTtlSeconds: e.ACK_TOKEN_TTL_SECONDS,
    escalation: e.ESCALATION_SNS_TOPIC_ARN || e.ESCALATION_SLACK_WEBHOOK_URL
      ? {
          delaySeconds: e.ESCALATION_DELAY_SECONDS,
          snsTopicArn: e.ESCALATION_SNS_TOPIC_ARN,
          slackWebhookUrl: secret(e.ESCALATION_SLACK_WEBHOOK_URL),
          scheduler: e.ESCALATION_SCHEDULE_GROUP && e.ESCALATION_FUNCTION_ARN && e.ESCALATION_ROLE_ARN
            ? {
                groupName: e.ESCALATION_SCHEDULE_GROUP,
                functionArn: e.ESCALATION_FUNCTION_ARN,
                roleArn: e.ESCALATION_ROLE_ARN,
                ...(e.ESCALATION_DEAD_LETTER_QUEUE_ARN && { deadLetterQueueArn: e.ESCALATION_DEAD_LETTER_QUEUE_ARN }),
              }
            : undefined,
        }
      : undefined,
    tableName: e.TABLE_NAME,
    logLevel: e.LOG_LEVEL,
    enrichment: {
      timeoutMs: e.ENRICHMENT_TIMEOUT_MS,
      memoryTrendWindowHours: e.MEMORY_TREND_WINDOW_HOURS,
      gpuMemoryCapacityMiB: e.GPU_MEMORY_CAPACITY_MIB,
      memorySeries: e.MEMORY_SERIES,
      memorySeriesUnit: e.MEMORY_SERIES_UNIT,
      queryTimeoutMs: e.PROMETHEUS_QUERY_TIMEOUT_MS,
    },
    routing,
    dedupeTtlSeconds: e.DEDUPE_TTL_SECONDS,
    dedupeLeaseMs: e.DEDUPE_LEASE_MS,
    delivery: { timeoutMs: e.DELIVERY_TIMEOUT_MS, retries: e.DELIVERY_RETRIES },
    warnings,
  };
}

/** Every setting this service reads: the schema's, and the secrets the routing file references. */
function settingNames(env: Record<string, string | undefined>): string[] {
  const routingFile = env.ROUTING_FILE?.trim();
  return [...Object.keys(envSchema.shape), ...(routingFile ? routingReader().routingSecretNames(routingFile) : [])];
}

/** Settings of `shared/ack` that only make sense together. */
function ackProblems(e: z.infer<typeof envSchema>): string[] {
  const problems: string[] = [];
  if (e.ACK_SECRET_PREVIOUS && !e.ACK_SECRET) problems.push('ACK_SECRET_PREVIOUS: set, but ACK_SECRET is not');
  if (e.ACK_SECRET_PREVIOUS && !e.ACK_SECRET_PREVIOUS_UNTIL) problems.push('ACK_SECRET_PREVIOUS_UNTIL: required with ACK_SECRET_PREVIOUS (the end of its grace period)');
  if (e.ACK_SECRET_PREVIOUS_UNTIL && !e.ACK_SECRET_PREVIOUS) problems.push('ACK_SECRET_PREVIOUS_UNTIL: set, but ACK_SECRET_PREVIOUS is not');
  const scheduler = [e.ESCALATION_SCHEDULE_GROUP, e.ESCALATION_FUNCTION_ARN, e.ESCALATION_ROLE_ARN].filter(Boolean).length;
  if (scheduler > 0 && scheduler < 3) problems.push('ESCALATION_SCHEDULE_GROUP: set ESCALATION_SCHEDULE_GROUP, ESCALATION_FUNCTION_ARN and ESCALATION_ROLE_ARN together, or none');
  const target = e.ESCALATION_SLACK_WEBHOOK_URL ? 'ESCALATION_SLACK_WEBHOOK_URL' : e.ESCALATION_SNS_TOPIC_ARN ? 'ESCALATION_SNS_TOPIC_ARN' : undefined;
  const missing = [!e.PUBLIC_URL && 'PUBLIC_URL', !e.ACK_SECRET && 'ACK_SECRET'].filter(Boolean);
  // Without acknowledgement links nobody can stop an escalation: every critical alert would escalate.
  if (target && missing.length) problems.push(`${target}: escalation needs acknowledgement links, but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set (every critical alert would escalate, since nobody could acknowledge it)`);
  if (e.ESCALATION_DEAD_LETTER_QUEUE_ARN && scheduler === 0) problems.push('ESCALATION_DEAD_LETTER_QUEUE_ARN: set, but the scheduler settings (ESCALATION_SCHEDULE_GROUP, ...) are not');
  return problems;
}

/** Settings of the Slack app that only make sense together. */
function slackAppProblems(e: z.infer<typeof envSchema>): string[] {
  const problems: string[] = [];
  if (e.SLACK_CHANNEL && !e.SLACK_BOT_TOKEN) problems.push('SLACK_CHANNEL: set, but SLACK_BOT_TOKEN is not (the Slack app posts with its bot token)');
  if (e.SLACK_CHANNEL && e.SLACK_WEBHOOK_URL) problems.push('SLACK_CHANNEL: set together with SLACK_WEBHOOK_URL; both would be the channel named slack (choose one, or add a slack-app instance in the routing file)');
  if (e.SLACK_SIGNING_SECRET && !(e.PUBLIC_URL && e.ACK_SECRET)) problems.push('SLACK_SIGNING_SECRET: set, but PUBLIC_URL and ACK_SECRET are not (the Acknowledge button carries a signed acknowledgement token)');
  return problems;
}

/**
 * Loads `ROUTING_FILE`, looking its secret references up in `env`. Its problems join the others as
 * `ROUTING_FILE: <file>:<line>: <field>: <problem>`.
 */
function loadRouting(e: z.infer<typeof envSchema>, env: Record<string, string | undefined>, problems: string[]): RoutingConfig | undefined {
  if (!e.ROUTING_FILE) return undefined;
  const envChannels = ([['slack', e.SLACK_WEBHOOK_URL ?? (e.SLACK_BOT_TOKEN && e.SLACK_CHANNEL)], ['feishu', e.FEISHU_WEBHOOK_URL], ['sns', e.SNS_TOPIC_ARN], ['pagerduty', e.PAGERDUTY_ROUTING_KEY]] as const).filter(([, v]) => v).map(([name]) => name);
  const { loadRoutingFile, RoutingError } = routingReader();
  try {
    return loadRoutingFile(e.ROUTING_FILE, { settings: env, envChannels });
  } catch (err) {
    if (!(err instanceof RoutingError)) throw err;
    problems.push(...err.problems.map((p) => `ROUTING_FILE: ${p}`));
    return undefined;
  }
}
