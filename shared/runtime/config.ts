/**
 * Configuration, read once at start-up from environment variables and validated with zod.
 * Errors name the variable and never echo its value. Adapters receive this object; nothing
 * else reads `process.env`.
 *
 * The variable names are a public contract (users' Alertmanager configs and deployments use them):
 * add new ones, never rename or repurpose one.
 */
import { z } from 'zod';
import { webhookUrlProblem } from '../channels/settings.js';
import { TOPIC_ARN } from '../channels/sns/settings.js';
import { loadRoutingFile, RoutingError, routingSecretNames, type RoutingConfig } from '../routing/load.js';
import { Secret } from '../core/secret.js';
import { trimSettings, type SettingWarning } from './settings-whitespace.js';
import type { LogLevel } from '../core/logger.js';

/** An https URL; plain http is allowed only to loopback (local tests). The routing file applies the same rule. */
function webhookUrl() {
  return z.string().superRefine((s, ctx) => {
    const problem = webhookUrlProblem(s);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** Any http(s) URL (Prometheus, Alertmanager, the public URL of this service). */
function httpUrl() {
  return z
    .string()
    .superRefine((s, ctx) => {
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
    })
    .transform((s) => s.replace(/\/+$/, ''));
}

/** This service's public base URL: links append `/v1/ack/<token>` to it, so a query or fragment would break them. */
const publicUrl = () =>
  httpUrl().refine((s) => !/[?#]/.test(s), { message: 'must not have a query or fragment (links append /v1/ack/… to it); a path prefix is fine' });

const topicArn = () => z.string().regex(TOPIC_ARN, { message: 'must be an SNS topic ARN (arn:aws:sns:REGION:ACCOUNT:NAME)' });

const optional = <T extends z.ZodTypeAny>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

const positiveNumber = (fallback: number) =>
  z.preprocess((v) => (v === '' || v === undefined ? fallback : Number(v)), z.number({ message: 'must be a number' }).positive({ message: 'must be a positive number' }));

/** Milliseconds and seconds are whole numbers: timers (AbortSignal.timeout) refuse fractions. */
const positiveInteger = (fallback: number) =>
  z.preprocess((v) => (v === '' || v === undefined ? fallback : Number(v)), z.number({ message: 'must be a whole number' }).int({ message: 'must be a whole number' }).positive({ message: 'must be a positive whole number' }));

/** A token Alertmanager can carry in a bearer header: the characters of RFC 6750's b64token, as hono's bearerAuth checks them. */
export const webhookTokenSchema = z.string()
  .min(16, { message: 'must be at least 16 characters' })
  .regex(/^[A-Za-z0-9._~+/-]+=*$/, { message: 'must use only the characters A-Z a-z 0-9 - . _ ~ + / (RFC 6750)' });

/** `true` or `false` (unset: `false`). */
const flag = () =>
  z.preprocess((v) => (v === '' || v === undefined ? 'false' : v), z.enum(['true', 'false'], { message: 'must be true or false' })).transform((v) => v === 'true');

const envSchema = z.object({
  PORT: z.preprocess((v) => (v === '' || v === undefined ? 8080 : Number(v)), z.number({ message: 'must be a port number 0–65535' }).int({ message: 'must be a port number 0–65535' }).min(0, { message: 'must be a port number 0–65535' }).max(65535, { message: 'must be a port number 0–65535' })),
  WEBHOOK_TOKEN: optional(webhookTokenSchema),
  WEBHOOK_TOKEN_PREVIOUS: optional(webhookTokenSchema),
  ALLOW_UNAUTHENTICATED: flag(),
  // Unset: `Watchdog`; set to "" to turn the dead-man's switch off (so '' is not "unset" here).
  HEARTBEAT_ALERTNAME: z.preprocess((v) => (v === undefined ? 'Watchdog' : v), z.string().regex(/^([A-Za-z_:][A-Za-z0-9_:]*)?$/, { message: 'must be an alert name (a Prometheus metric name), or "" to turn heartbeats off' })),
  HEARTBEAT_TIMEOUT_SECONDS: positiveInteger(600),
  PROMETHEUS_URL: optional(httpUrl()),
  SLACK_WEBHOOK_URL: optional(webhookUrl()),
  FEISHU_WEBHOOK_URL: optional(webhookUrl()),
  FEISHU_SECRET: optional(z.string().min(1)),
  SNS_TOPIC_ARN: optional(topicArn()),
  PUBLIC_URL: optional(publicUrl()),
  ACK_SECRET: optional(z.string().min(32, { message: 'must be at least 32 characters' })),
  ALERTMANAGER_URL: optional(httpUrl()),
  // Acknowledgement links and escalation (shared/ack).
  ACK_SECRET_PREVIOUS: optional(z.string().min(32, { message: 'must be at least 32 characters' })),
  ACK_SECRET_PREVIOUS_UNTIL: optional(z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: 'must be an RFC 3339 time, e.g. 2026-12-01T00:00:00Z' })),
  ACK_TOKEN_TTL_SECONDS: positiveInteger(7 * 24 * 3600),
  ESCALATION_DELAY_SECONDS: positiveNumber(15 * 60),
  ESCALATION_SNS_TOPIC_ARN: optional(topicArn()),
  ESCALATION_SLACK_WEBHOOK_URL: optional(webhookUrl()),
  ESCALATION_SCHEDULE_GROUP: optional(z.string().regex(/^[0-9A-Za-z_.-]{1,64}$/, { message: 'must be an EventBridge Scheduler group name' })),
  ESCALATION_FUNCTION_ARN: optional(z.string().regex(/^arn:aws[a-z-]*:lambda:/, { message: 'must be a Lambda function ARN' })),
  ESCALATION_ROLE_ARN: optional(z.string().regex(/^arn:aws[a-z-]*:iam::\d{12}:role\//, { message: 'must be an IAM role ARN' })),
  ESCALATION_DEAD_LETTER_QUEUE_ARN: optional(z.string().regex(/^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}$/, { message: 'must be an SQS queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME)' })),
  // Channel instances and routes (shared/routing); read and checked here, once.
  ROUTING_FILE: optional(z.string()),
  TABLE_NAME: optional(z.string().regex(/^[A-Za-z0-9_.-]{3,255}$/, { message: 'must be a DynamoDB table name (3–255 of A-Z a-z 0-9 _ . -)' })),
  LOG_LEVEL: z.preprocess((v) => (v === '' || v === undefined ? 'info' : v), z.enum(['debug', 'info', 'warn', 'error'], { message: 'must be one of debug, info, warn, error' })),
  ENRICHMENT_TIMEOUT_MS: positiveInteger(2000),
  MEMORY_TREND_WINDOW_HOURS: positiveNumber(6),
  GPU_MEMORY_CAPACITY_MIB: optional(z.coerce.number({ message: 'must be a number' }).positive({ message: 'must be a positive number' })),
  MEMORY_SERIES: optional(z.string().regex(/^[A-Za-z_:][A-Za-z0-9_:]*$/, { message: 'must be a Prometheus metric name, e.g. process_resident_memory_bytes' })),
  MEMORY_SERIES_UNIT: optional(z.enum(['bytes', 'KiB', 'MiB', 'GiB'], { message: 'must be one of bytes, KiB, MiB, GiB' })),
  PROMETHEUS_QUERY_TIMEOUT_MS: optional(z.coerce.number({ message: 'must be a whole number' }).int({ message: 'must be a whole number' }).positive({ message: 'must be a positive whole number' })),
  DEDUPE_TTL_SECONDS: positiveInteger(30 * 24 * 3600),
  DEDUPE_LEASE_MS: z.preprocess((v) => (v === '' || v === undefined ? 60_000 : Number(v)), z.number().int({ message: 'must be a whole number of milliseconds 1000–3600000' }).min(1000, { message: 'must be a whole number of milliseconds 1000–3600000' }).max(3_600_000, { message: 'must be a whole number of milliseconds 1000–3600000' })),
  DELIVERY_TIMEOUT_MS: positiveInteger(5000),
  DELIVERY_RETRIES: z.preprocess((v) => (v === '' || v === undefined ? 2 : Number(v)), z.number().int().min(0).max(10, { message: 'must be an integer 0–10' })),
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
  feishu?: { webhookUrl: Secret; secret?: Secret };
  sns?: { topicArn: string };
  publicUrl?: string;
  ackSecret?: Secret;
  alertmanagerUrl?: string;
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
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Validates the environment once.
 * @param raw usually `process.env`
 * @returns the typed configuration, secrets wrapped in {@link Secret}; surrounding whitespace is removed
 *   from every setting and reported in `warnings` (see `settings-whitespace.ts`)
 * @throws ConfigError naming each bad variable (never its value)
 */
export function loadConfig(raw: Record<string, string | undefined>): Config {
  const { settings: env, warnings } = trimSettings(raw, settingNames(raw));
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  if (e.FEISHU_SECRET && !e.FEISHU_WEBHOOK_URL) problems.push('FEISHU_SECRET: set, but FEISHU_WEBHOOK_URL is not');
  if (e.WEBHOOK_TOKEN_PREVIOUS && !e.WEBHOOK_TOKEN) problems.push('WEBHOOK_TOKEN_PREVIOUS: set, but WEBHOOK_TOKEN is not (a rotation needs the new token too)');
  problems.push(...ackProblems(e));
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
    feishu: e.FEISHU_WEBHOOK_URL ? { webhookUrl: new Secret(e.FEISHU_WEBHOOK_URL), secret: secret(e.FEISHU_SECRET) } : undefined,
    sns: e.SNS_TOPIC_ARN ? { topicArn: e.SNS_TOPIC_ARN } : undefined,
    publicUrl: e.PUBLIC_URL,
    ackSecret: secret(e.ACK_SECRET),
    alertmanagerUrl: e.ALERTMANAGER_URL,
    ackPreviousSecret: e.ACK_SECRET_PREVIOUS && e.ACK_SECRET_PREVIOUS_UNTIL ? { secret: new Secret(e.ACK_SECRET_PREVIOUS), untilMs: Date.parse(e.ACK_SECRET_PREVIOUS_UNTIL) } : undefined,
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
  return [...Object.keys(envSchema.shape), ...(routingFile ? routingSecretNames(routingFile) : [])];
}

/** Settings of `shared/ack` that only make sense together. */
function ackProblems(e: z.infer<typeof envSchema>): string[] {
  const problems: string[] = [];
  if (e.ACK_SECRET_PREVIOUS && !e.ACK_SECRET) problems.push('ACK_SECRET_PREVIOUS: set, but ACK_SECRET is not');
  if (e.ACK_SECRET_PREVIOUS && !e.ACK_SECRET_PREVIOUS_UNTIL) problems.push('ACK_SECRET_PREVIOUS_UNTIL: required with ACK_SECRET_PREVIOUS (the end of its grace period)');
  if (e.ACK_SECRET_PREVIOUS_UNTIL && !e.ACK_SECRET_PREVIOUS) problems.push('ACK_SECRET_PREVIOUS_UNTIL: set, but ACK_SECRET_PREVIOUS is not');
  const scheduler = [e.ESCALATION_SCHEDULE_GROUP, e.ESCALATION_FUNCTION_ARN, e.ESCALATION_ROLE_ARN].filter(Boolean).length;
  if (scheduler > 0 && scheduler < 3) problems.push('ESCALATION_SCHEDULE_GROUP: set ESCALATION_SCHEDULE_GROUP, ESCALATION_FUNCTION_ARN and ESCALATION_ROLE_ARN together, or none');
  if (e.ESCALATION_DEAD_LETTER_QUEUE_ARN && scheduler === 0) problems.push('ESCALATION_DEAD_LETTER_QUEUE_ARN: set, but the scheduler settings (ESCALATION_SCHEDULE_GROUP, ...) are not');
  return problems;
}

/**
 * Loads `ROUTING_FILE`, looking its secret references up in `env`. Its problems join the others as
 * `ROUTING_FILE: <file>:<line>: <field>: <problem>`.
 */
function loadRouting(e: z.infer<typeof envSchema>, env: Record<string, string | undefined>, problems: string[]): RoutingConfig | undefined {
  if (!e.ROUTING_FILE) return undefined;
  const envChannels = ([['slack', e.SLACK_WEBHOOK_URL], ['feishu', e.FEISHU_WEBHOOK_URL], ['sns', e.SNS_TOPIC_ARN]] as const).filter(([, v]) => v).map(([name]) => name);
  try {
    return loadRoutingFile(e.ROUTING_FILE, { settings: env, envChannels });
  } catch (err) {
    if (!(err instanceof RoutingError)) throw err;
    problems.push(...err.problems.map((p) => `ROUTING_FILE: ${p}`));
    return undefined;
  }
}
