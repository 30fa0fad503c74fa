/**
 * Configuration, read once at start-up from environment variables and validated with zod.
 * Errors name the variable and never echo its value. Adapters receive this object; nothing
 * else reads `process.env`. The channels' variables are declared by each channel type
 * (`shared/channels/<type>/settings.ts`) and read here through the registry (`CHANNEL_ENV`).
 *
 * The variable names are a public contract (users' Alertmanager configs and deployments use them):
 * add new ones, never rename or repurpose one.
 */
// zod/mini with English messages (`core/zod.ts`): classic zod would cost the receiver's cold init.
import { resolve } from 'node:path';
import * as z from '../core/zod.js';
import { CHANNEL_ENV, type ChannelInstance, type ChannelOptions } from '../channels/registry.js';
import type { RoutingConfig } from '../routing/load.js';
import { loadRoutingReader, routingReader } from './routing-reader.js';
import { Secret } from '../core/secret.js';
import { atLeast, matching, optional, requires, secretOf } from '../core/settings.js';
import { trimSettings, type SettingWarning } from './settings-whitespace.js';
import { unknownSettings } from './unknown-settings.js';
import type { LogLevel } from '../core/logger.js';
import { PipelineError } from '../core/errors.js';
import { DEFAULT_DELIVERY_BUDGET_MS } from '../channels/deliver.js';
import { TOPIC_ARN } from '../channels/sns/settings.js';
import { DEFAULT_MAX_HEARTBEAT_ENTRIES } from '../store/heartbeat.js';
import {
  baseUrlProblem,
  commaList,
  optionalWholeNumber,
  pointInTime,
  positiveDecimal,
  portNumber,
  wholeNumber,
} from './setting-rules.js';
import { trimTrailing } from '../core/trim.js';
import type { HttpCredentials } from '../core/endpoint.js';
import {
  awsRegion,
  basicAuth,
  bearerToken,
  credentialProblems,
  credentialsOf,
  credentialValues,
  extraHeaders,
} from './endpoint-settings.js';
import { timeZoneProblem } from '../render/format.js';

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
      if (!['http:', 'https:'].includes(url.protocol))
        ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL' });
      // fetch refuses URLs with user:password@, and the URL is logged at start: never carry credentials in it.
      else if (url.username || url.password)
        ctx.addIssue({ code: 'custom', message: 'must not contain credentials (user:password@)' });
    }),
  );
  return z.pipe(
    url,
    z.transform((s) => trimTrailing(s, '/')),
  );
}

/** This service's public base URL: links append `/v1/ack/<token>` to it, so a query or fragment would break them. */
const publicUrl = () =>
  httpUrl().check(
    z.refine((s) => !/[?#]/.test(s), {
      message: 'must not have a query or fragment (links append /v1/ack/… to it); a path prefix is fine',
    }),
  );

/** Grafana's root URL or a dashboard's URL: links set `var-…`, `from` and `to` in its query, so a fragment would hide them. */
const grafanaUrlSetting = () =>
  httpUrl().check(
    z.refine((s) => !s.includes('#'), {
      message:
        'must not have a fragment (#…); a path prefix, a dashboard path /d/<uid> or a query such as ?orgId=2 is fine',
    }),
  );

/** A Prometheus or Alertmanager base URL: not a UI page, an API path, a query or a fragment ({@link baseUrlProblem}). */
const baseUrl = (example: string) =>
  httpUrl().check(
    z.superRefine((s, ctx) => {
      const problem = baseUrlProblem(s, example);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  );

/**
 * What Alertmanager calls itself in a heartbeat's message: its `externalURL` (an http(s) URL), or for
 * AMP's default text body, which names none, `amp:<SNS topic ARN>`.
 */
function heartbeatSourceProblem(source: string): string | undefined {
  if (source.startsWith('amp:'))
    return TOPIC_ARN.test(source.slice(4)) ? undefined : 'amp: must be followed by an SNS topic ARN';
  try {
    return ['http:', 'https:'].includes(new URL(source).protocol)
      ? undefined
      : "must be an Alertmanager's http(s) externalURL";
  } catch {
    return "must be an Alertmanager's http(s) externalURL, or amp:<SNS topic ARN>";
  }
}

/** Longest time-out of one step of a group's delivery, milliseconds: the whole group's budget. */
const MAX_GROUP_STEP_MS = DEFAULT_DELIVERY_BUDGET_MS;
const WEEK_SECONDS = 7 * 24 * 3600;

/** `ACK_SECRET` and its predecessor: HMAC keys of acknowledgement links. */
const ackSecret = () =>
  optional(atLeast(32, 'must be at least 32 characters (e.g. the output of `openssl rand -hex 32`)'));

/** A token Alertmanager can carry in a bearer header: the characters of RFC 6750's b64token, as hono's bearerAuth checks them. */
export const webhookTokenSchema = z
  .string()
  .check(
    z.minLength(16, { message: 'must be at least 16 characters' }),
    z.regex(/^[A-Za-z0-9._~+/-]+=*$/, { message: 'must use only the characters A-Z a-z 0-9 - . _ ~ + / (RFC 6750)' }),
  );

/** `true` or `false` (unset: `false`). */
const flag = () =>
  z.pipe(
    z.pipe(
      z.transform((v) => (v === '' || v === undefined ? 'false' : v)),
      z.enum(['true', 'false'], { message: 'must be true or false' }),
    ),
    z.transform((v) => v === 'true'),
  );

/** The service's own settings; each channel type declares its own (`CHANNEL_ENV`). */
const envSchema = z.object({
  PORT: portNumber(8080),
  WEBHOOK_TOKEN: optional(webhookTokenSchema),
  WEBHOOK_TOKEN_PREVIOUS: optional(webhookTokenSchema),
  ALLOW_UNAUTHENTICATED: flag(),
  // Unset: `Watchdog`; set to "" to turn the dead-man's switch off (so '' is not "unset" here).
  HEARTBEAT_ALERTNAME: z.pipe(
    z.transform((v) => (v === undefined ? 'Watchdog' : v)),
    matching(
      /^([A-Za-z_:][A-Za-z0-9_:]*)?$/,
      'must be an alert name (a Prometheus metric name), or "" to turn heartbeats off',
    ),
  ),
  HEARTBEAT_TIMEOUT_SECONDS: wholeNumber(600, 1, WEEK_SECONDS, 'seconds'),
  HEARTBEAT_EXTERNAL_URLS: commaList(heartbeatSourceProblem),
  HEARTBEAT_FINGERPRINTS: commaList((f) =>
    /^[0-9a-f]{16}$/.test(f) ? undefined : "must be an alert fingerprint, 16 hex digits (Alertmanager's API shows it)",
  ),
  HEARTBEAT_MAX_CLUSTERS: wholeNumber(DEFAULT_MAX_HEARTBEAT_ENTRIES, 1, 1000, 'heartbeat alerts'),
  PROMETHEUS_URL: optional(baseUrl('http://prometheus:9090')),
  // What every request to PROMETHEUS_URL and ALERTMANAGER_URL carries (endpoint-settings.ts); the first three secret.
  PROMETHEUS_BEARER_TOKEN: optional(bearerToken()),
  PROMETHEUS_BASIC_AUTH: optional(basicAuth()),
  PROMETHEUS_HEADERS: optional(extraHeaders('PROMETHEUS')),
  PROMETHEUS_SIGV4_REGION: optional(awsRegion()),
  PUBLIC_URL: optional(publicUrl()),
  ACK_SECRET: ackSecret(),
  ALERTMANAGER_URL: optional(baseUrl('http://alertmanager:9093')),
  ALERTMANAGER_BEARER_TOKEN: optional(bearerToken()),
  ALERTMANAGER_BASIC_AUTH: optional(basicAuth()),
  ALERTMANAGER_HEADERS: optional(extraHeaders('ALERTMANAGER')),
  ALERTMANAGER_SIGV4_REGION: optional(awsRegion()),
  // Messages and the acknowledgement page link each alert to the shipped dashboard there (shared/render/grafana.ts).
  GRAFANA_URL: optional(grafanaUrlSetting()),
  // Acknowledgement links and escalation (shared/ack); the escalation targets are channels' settings.
  ACK_SECRET_PREVIOUS: ackSecret(),
  ACK_SECRET_PREVIOUS_UNTIL: optional(pointInTime()),
  ACK_TOKEN_TTL_SECONDS: wholeNumber(WEEK_SECONDS, 1, 90 * 24 * 3600, 'seconds'),
  ESCALATION_DELAY_SECONDS: positiveDecimal(15 * 60, WEEK_SECONDS, 'seconds'),
  // Channel instances (the routing file's or the environment's) that get escalations too; checked by name below.
  ESCALATION_CHANNELS: commaList(() => undefined),
  ESCALATION_SCHEDULE_GROUP: optional(
    matching(/^[0-9A-Za-z_.-]{1,64}$/, 'must be an EventBridge Scheduler group name'),
  ),
  ESCALATION_FUNCTION_ARN: optional(matching(/^arn:aws[a-z-]*:lambda:/, 'must be a Lambda function ARN')),
  ESCALATION_ROLE_ARN: optional(matching(/^arn:aws[a-z-]*:iam::\d{12}:role\//, 'must be an IAM role ARN')),
  ESCALATION_DEAD_LETTER_QUEUE_ARN: optional(
    matching(
      /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}$/,
      'must be an SQS queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME)',
    ),
  ),
  // Kept acknowledgement follow-ups in Lambda (shared/ack/follow-up-schedules.ts): the CDK stack sets them.
  FOLLOW_UP_SCHEDULE_GROUP: optional(matching(/^[0-9A-Za-z_.-]{1,64}$/, 'must be an EventBridge Scheduler group name')),
  FOLLOW_UP_ROLE_ARN: optional(matching(/^arn:aws[a-z-]*:iam::\d{12}:role\//, 'must be an IAM role ARN')),
  FOLLOW_UP_DEAD_LETTER_QUEUE_ARN: optional(
    matching(
      /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}$/,
      'must be an SQS queue ARN (arn:aws:sqs:REGION:ACCOUNT:NAME)',
    ),
  ),
  // Channel instances and routes (shared/routing); read and checked here, once.
  ROUTING_FILE: optional(z.string()),
  TABLE_NAME: optional(
    matching(/^[A-Za-z0-9_.-]{3,255}$/, 'must be a DynamoDB table name (3–255 of A-Z a-z 0-9 _ . -)'),
  ),
  // Every time in messages and pages (shared/render/format.ts): an IANA name, default UTC.
  TIME_ZONE: z.pipe(
    z.transform((v) => (v === '' || v === undefined ? 'UTC' : v)),
    z.string().check(
      z.superRefine((zone, ctx) => {
        const problem = timeZoneProblem(zone);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
    ),
  ),
  // npm start's embedded store on disk (shared/runtime/data-dir.ts); the folder itself is checked at start.
  DATA_DIR: optional(z.string()),
  LOG_LEVEL: z.pipe(
    z.transform((v) => (v === '' || v === undefined ? 'info' : v)),
    z.enum(['debug', 'info', 'warn', 'error'], { message: 'must be one of debug, info, warn, error' }),
  ),
  ENRICHMENT_TIMEOUT_MS: wholeNumber(2000, 1, MAX_GROUP_STEP_MS, 'milliseconds'),
  MEMORY_TREND_WINDOW_HOURS: positiveDecimal(6, 7 * 24, 'hours'),
  GPU_MEMORY_CAPACITY_MIB: optional(
    z.coerce.number({ message: 'must be a number' }).check(z.positive({ message: 'must be a positive number' })),
  ),
  MEMORY_SERIES: optional(
    matching(/^[A-Za-z_:][A-Za-z0-9_:]*$/, 'must be a Prometheus metric name, e.g. process_resident_memory_bytes'),
  ),
  MEMORY_SERIES_UNIT: optional(
    z.enum(['bytes', 'KiB', 'MiB', 'GiB'], { message: 'must be one of bytes, KiB, MiB, GiB' }),
  ),
  PROMETHEUS_QUERY_TIMEOUT_MS: optionalWholeNumber(1, MAX_GROUP_STEP_MS, 'milliseconds'),
  DEDUPE_TTL_SECONDS: wholeNumber(30 * 24 * 3600, 1, 365 * 24 * 3600, 'seconds'),
  DEDUPE_LEASE_MS: wholeNumber(60_000, 1000, 3_600_000, 'milliseconds'),
  DELIVERY_TIMEOUT_MS: wholeNumber(5000, 1, MAX_GROUP_STEP_MS, 'milliseconds'),
  DELIVERY_RETRIES: wholeNumber(2, 0, 10, 'retries'),
});

/**
 * The name of every environment setting the schemas read, the service's then the channel types': the
 * public contract that docs/settings.md documents (`test/unit/docs/reference.test.ts` compares the two).
 */
export const SETTING_NAMES: readonly string[] = [
  ...Object.keys(envSchema.shape),
  ...Object.keys(CHANNEL_ENV.schema.shape),
];

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
  heartbeat?: {
    alertname: string;
    timeoutSeconds: number;
    /** `HEARTBEAT_EXTERNAL_URLS`: only these Alertmanagers' heartbeats count; unset: any. */
    externalUrls?: string[];
    /** `HEARTBEAT_FINGERPRINTS`: only these heartbeat alerts count; unset: any. */
    fingerprints?: string[];
    /** `HEARTBEAT_MAX_CLUSTERS`: most Alertmanagers, and most heartbeat alerts, watched. */
    maxClusters: number;
  };
  /** Base URL of the Prometheus HTTP API (no trailing slash). Unset: enrichment is unavailable. */
  prometheusUrl?: string;
  /**
   * What every request to {@link prometheusUrl} carries (`PROMETHEUS_BEARER_TOKEN`, `PROMETHEUS_BASIC_AUTH`,
   * `PROMETHEUS_HEADERS`, `PROMETHEUS_SIGV4_REGION`); unset when none is set. `endpoints.ts` pairs the two.
   */
  prometheusCredentials?: HttpCredentials;
  /**
   * The channels the environment variables configure (`SLACK_WEBHOOK_URL`: `slack`, `FEISHU_WEBHOOK_URL`:
   * `feishu`, …, as each type's `settings.ts` declares), in registry order. Routing-file instances are in `routing`.
   */
  envChannels: ChannelInstance[];
  /**
   * What channel types' variables say beyond their channels, by type: `slack-app` the signing secret and
   * `SLACK_API_URL`; `feishu-app` the app (`FEISHU_APP_ID`…), its chat and callback keys, set only when configured.
   */
  channelOptions: ChannelOptions;
  publicUrl?: string;
  ackSecret?: Secret;
  alertmanagerUrl?: string;
  /** What every request to {@link alertmanagerUrl} carries (`ALERTMANAGER_BEARER_TOKEN`…), as for Prometheus. */
  alertmanagerCredentials?: HttpCredentials;
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
    /** The channels that get the escalation (`ESCALATION_SLACK_WEBHOOK_URL`: `escalation-slack`, …), in registry order. */
    targets: ChannelInstance[];
    /**
     * `ESCALATION_CHANNELS`: names of channel instances (the routing file's, or the environment's `slack`,
     * `pagerduty`, …) that get the escalation too, each as the same channel that gets its routed alerts; in
     * the setting's order, each once. Checked at start-up: every name is an instance.
     */
    channels: string[];
    /** EventBridge Scheduler wiring (the CDK stack sets it); unset: in-process timers (`npm start`). */
    scheduler?: { groupName: string; functionArn: string; roleArn: string; deadLetterQueueArn?: string };
  };
  /**
   * EventBridge Scheduler wiring of kept acknowledgement follow-ups in Lambda (`FOLLOW_UP_SCHEDULE_GROUP`,
   * `FOLLOW_UP_ROLE_ARN`, `FOLLOW_UP_DEAD_LETTER_QUEUE_ARN`; the CDK stack sets them). The schedules invoke the
   * function that kept the follow-up (its own ARN, from the invocation). Unset: in-process timers under
   * `npm start`; in Lambda a follow-up that fails is not tried again (a warning at cold start).
   */
  followUpScheduler?: { groupName: string; roleArn: string; deadLetterQueueArn?: string };
  /** DynamoDB table; unset for `npm start` means an embedded dynalite table. */
  tableName?: string;
  /** `TIME_ZONE`: the IANA time zone of every time shown (messages and the acknowledgement page); default `UTC`. */
  timeZone: string;
  /**
   * `DATA_DIR`, made absolute: the folder of `npm start`'s embedded store (`shared/runtime/data-dir.ts`).
   * Unset: the embedded store is in memory. Never with `TABLE_NAME` or `AWS_ENDPOINT_URL_DYNAMODB`.
   */
  dataDir?: string;
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
   * alert. Unset: every channel of {@link envChannels} gets every alert.
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
  const names = settingNames(raw);
  const { settings: env, warnings } = trimSettings(raw, names);
  warnings.push(...unknownSettings(raw, names));
  const { e, channels } = parseSettings(env);
  const problems = [
    ...requires(e, 'WEBHOOK_TOKEN_PREVIOUS', 'WEBHOOK_TOKEN', 'a rotation needs the new token too'),
    ...ackProblems(e, channels.escalation[0]?.setting ?? (e.ESCALATION_CHANNELS && 'ESCALATION_CHANNELS')),
    ...heartbeatProblems(e),
    ...credentialProblems(e, 'PROMETHEUS'),
    ...credentialProblems(e, 'ALERTMANAGER'),
    ...channels.problems,
    ...dataDirProblems(e, env),
  ];
  if (e.PROMETHEUS_QUERY_TIMEOUT_MS !== undefined && e.PROMETHEUS_QUERY_TIMEOUT_MS > e.ENRICHMENT_TIMEOUT_MS) {
    problems.push(
      `PROMETHEUS_QUERY_TIMEOUT_MS: must not exceed ENRICHMENT_TIMEOUT_MS (${e.ENRICHMENT_TIMEOUT_MS} ms), the budget of all queries of a group`,
    );
  }
  const routing = loadRouting(e.ROUTING_FILE, env, channels.channels, problems);
  const escalationChannels = escalationChannelNames(e, channels.channels, routing, problems);
  problems.push(...urgentProblems(channels.escalation.length + escalationChannels.length > 0, routing));
  if (problems.length) throw new ConfigError(problems);
  return configOf(e, { channels, escalationChannels, routing, warnings });
}

type EnvSettings = z.infer<typeof envSchema>;
type ChannelSettings = ReturnType<typeof CHANNEL_ENV.read>;

/**
 * The service's own settings and the channels' parsed, each on its own.
 * @throws ConfigError naming each bad setting of either
 */
function parseSettings(env: Record<string, string | undefined>): { e: EnvSettings; channels: ChannelSettings } {
  // Parsed once per process: zod's compiled fast path (`new Function` per object schema) would cost more
  // to generate than it saves (~40 ms of a Lambda cold start for this schema, bench/floor.ts).
  const parsed = envSchema.safeParse(env, { jitless: true });
  const channelSettings = CHANNEL_ENV.schema.safeParse(env, { jitless: true });
  if (!parsed.success || !channelSettings.success) {
    const issues = [...(parsed.error?.issues ?? []), ...(channelSettings.error?.issues ?? [])];
    throw new ConfigError(issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  return { e: parsed.data, channels: CHANNEL_ENV.read(channelSettings.data, env) };
}

/**
 * The configuration that settings found valid make, with the channels, the routing and the start-up warnings;
 * `escalationChannels` is `ESCALATION_CHANNELS`, already checked against the instances.
 */
function configOf(
  e: EnvSettings,
  parts: {
    channels: ChannelSettings;
    escalationChannels: string[];
    routing: Config['routing'];
    warnings: Config['warnings'];
  },
): Config {
  return {
    port: e.PORT,
    webhookToken: secretOf(e.WEBHOOK_TOKEN),
    webhookTokenPrevious: secretOf(e.WEBHOOK_TOKEN_PREVIOUS),
    allowUnauthenticated: e.ALLOW_UNAUTHENTICATED,
    heartbeat: heartbeatOf(e),
    ...sourcesOf(e),
    envChannels: parts.channels.channels,
    channelOptions: parts.channels.options,
    ...acknowledgementOf(e),
    escalation: escalationOf(e, parts.channels.escalation, parts.escalationChannels),
    ...followUpSchedulerOf(e),
    tableName: e.TABLE_NAME,
    timeZone: e.TIME_ZONE,
    ...(e.DATA_DIR && { dataDir: resolve(e.DATA_DIR) }),
    logLevel: e.LOG_LEVEL,
    enrichment: {
      timeoutMs: e.ENRICHMENT_TIMEOUT_MS,
      memoryTrendWindowHours: e.MEMORY_TREND_WINDOW_HOURS,
      gpuMemoryCapacityMiB: e.GPU_MEMORY_CAPACITY_MIB,
      memorySeries: e.MEMORY_SERIES,
      memorySeriesUnit: e.MEMORY_SERIES_UNIT,
      queryTimeoutMs: e.PROMETHEUS_QUERY_TIMEOUT_MS,
    },
    routing: parts.routing,
    dedupeTtlSeconds: e.DEDUPE_TTL_SECONDS,
    dedupeLeaseMs: e.DEDUPE_LEASE_MS,
    delivery: { timeoutMs: e.DELIVERY_TIMEOUT_MS, retries: e.DELIVERY_RETRIES },
    warnings: parts.warnings,
  };
}

/** The dead-man's switch (`HEARTBEAT_*`); `undefined` when `HEARTBEAT_ALERTNAME` is empty (off). */
function heartbeatOf(e: EnvSettings): Config['heartbeat'] {
  if (!e.HEARTBEAT_ALERTNAME) return undefined;
  return {
    alertname: e.HEARTBEAT_ALERTNAME,
    timeoutSeconds: e.HEARTBEAT_TIMEOUT_SECONDS,
    externalUrls: e.HEARTBEAT_EXTERNAL_URLS,
    fingerprints: e.HEARTBEAT_FINGERPRINTS,
    maxClusters: e.HEARTBEAT_MAX_CLUSTERS,
  };
}

/** Where the pipeline asks and links: Prometheus, Alertmanager (each with its credentials), Grafana. */
function sourcesOf(e: EnvSettings) {
  return {
    prometheusUrl: e.PROMETHEUS_URL,
    prometheusCredentials: credentialsOf(credentialValues(e, 'PROMETHEUS')),
    alertmanagerUrl: e.ALERTMANAGER_URL,
    alertmanagerCredentials: credentialsOf(credentialValues(e, 'ALERTMANAGER')),
    grafanaUrl: e.GRAFANA_URL,
  };
}

/** The acknowledgement links: the public URL, the signing secret (and the previous one until it expires), the tokens' lifetime. */
function acknowledgementOf(e: EnvSettings) {
  return {
    publicUrl: e.PUBLIC_URL,
    ackSecret: secretOf(e.ACK_SECRET),
    ackPreviousSecret: ackPreviousSecretOf(e),
    ackTokenTtlSeconds: e.ACK_TOKEN_TTL_SECONDS,
  };
}

/**
 * Why one of the service's own settings would be refused at start-up, checked alone (the CDK stack checks
 * the values it puts into a function's environment with it, so a value `npm start` refuses fails `cdk synth`).
 * @param name a setting of {@link SETTING_NAMES} that the service itself reads, e.g. `PROMETHEUS_URL`
 * @param value its raw value
 * @returns the problems, in start-up's words (`must be the base URL, …`); `[]` when the value is accepted
 * @throws Error when `name` is not one of the service's own settings
 */
export function settingValueProblems(name: string, value: string): string[] {
  const schema = ({ ...envSchema.shape, ...CHANNEL_ENV.schema.shape } as Record<string, z.ZodMiniType | undefined>)[
    name
  ];
  if (!schema) throw new Error(`${name} is not one of the service's own settings`);
  const parsed = schema.safeParse(value.trim(), { jitless: true });
  return parsed.success ? [] : parsed.error.issues.map((i) => i.message);
}

/** Every setting this service reads: the schema's, and the secrets the routing file references. */
function settingNames(env: Record<string, string | undefined>): string[] {
  const routingFile = env.ROUTING_FILE?.trim();
  return [...SETTING_NAMES, ...(routingFile ? routingReader().routingSecretNames(routingFile) : [])];
}

/** Escalation, on when a target is set (a channel's `ESCALATION_*` setting, or `ESCALATION_CHANNELS`). */
function escalationOf(
  e: z.infer<typeof envSchema>,
  targets: { instance: ChannelInstance }[],
  channels: string[],
): Config['escalation'] {
  if (targets.length + channels.length === 0) return undefined;
  return {
    delaySeconds: e.ESCALATION_DELAY_SECONDS,
    targets: targets.map((t) => t.instance),
    channels,
    scheduler: schedulerOf(e),
  };
}

/** EventBridge Scheduler's wiring of escalation checks (the CDK stack sets it), when set. */
function schedulerOf(e: z.infer<typeof envSchema>): NonNullable<Config['escalation']>['scheduler'] {
  if (!(e.ESCALATION_SCHEDULE_GROUP && e.ESCALATION_FUNCTION_ARN && e.ESCALATION_ROLE_ARN)) return undefined;
  return {
    groupName: e.ESCALATION_SCHEDULE_GROUP,
    functionArn: e.ESCALATION_FUNCTION_ARN,
    roleArn: e.ESCALATION_ROLE_ARN,
    ...(e.ESCALATION_DEAD_LETTER_QUEUE_ARN && { deadLetterQueueArn: e.ESCALATION_DEAD_LETTER_QUEUE_ARN }),
  };
}

/** The previous `ACK_SECRET` and the end of its grace period, when both are set. */
function ackPreviousSecretOf(e: z.infer<typeof envSchema>): Config['ackPreviousSecret'] {
  if (!(e.ACK_SECRET_PREVIOUS && e.ACK_SECRET_PREVIOUS_UNTIL)) return undefined;
  return { secret: new Secret(e.ACK_SECRET_PREVIOUS), untilMs: e.ACK_SECRET_PREVIOUS_UNTIL };
}

/** EventBridge Scheduler's wiring of kept follow-ups (the CDK stack sets it), as `{followUpScheduler}` when set. */
function followUpSchedulerOf(e: z.infer<typeof envSchema>): Pick<Config, 'followUpScheduler'> {
  if (!(e.FOLLOW_UP_SCHEDULE_GROUP && e.FOLLOW_UP_ROLE_ARN)) return {};
  const dlq = e.FOLLOW_UP_DEAD_LETTER_QUEUE_ARN;
  return {
    followUpScheduler: {
      groupName: e.FOLLOW_UP_SCHEDULE_GROUP,
      roleArn: e.FOLLOW_UP_ROLE_ARN,
      ...(dlq && { deadLetterQueueArn: dlq }),
    },
  };
}

/** The follow-up scheduler's settings that only make sense together. */
function followUpProblems(e: z.infer<typeof envSchema>): string[] {
  if (e.FOLLOW_UP_SCHEDULE_GROUP && e.FOLLOW_UP_ROLE_ARN) return [];
  if (e.FOLLOW_UP_SCHEDULE_GROUP || e.FOLLOW_UP_ROLE_ARN)
    return ['FOLLOW_UP_SCHEDULE_GROUP: set FOLLOW_UP_SCHEDULE_GROUP and FOLLOW_UP_ROLE_ARN together, or neither'];
  return e.FOLLOW_UP_DEAD_LETTER_QUEUE_ARN
    ? ['FOLLOW_UP_DEAD_LETTER_QUEUE_ARN: set, but FOLLOW_UP_SCHEDULE_GROUP and FOLLOW_UP_ROLE_ARN are not']
    : [];
}

/**
 * Settings of `shared/ack` that only make sense together.
 * @param target the setting of the first escalation target, when one is set
 */
function ackProblems(e: z.infer<typeof envSchema>, target: string | undefined): string[] {
  const problems = [...requires(e, 'ACK_SECRET_PREVIOUS', 'ACK_SECRET'), ...followUpProblems(e)];
  if (e.ACK_SECRET_PREVIOUS && !e.ACK_SECRET_PREVIOUS_UNTIL)
    problems.push('ACK_SECRET_PREVIOUS_UNTIL: required with ACK_SECRET_PREVIOUS (the end of its grace period)');
  problems.push(...requires(e, 'ACK_SECRET_PREVIOUS_UNTIL', 'ACK_SECRET_PREVIOUS'));
  // Links live at most ACK_TOKEN_TTL_SECONDS: a grace period beyond keeps a retired key valid for nothing.
  if (e.ACK_SECRET_PREVIOUS_UNTIL && e.ACK_SECRET_PREVIOUS_UNTIL > Date.now() + e.ACK_TOKEN_TTL_SECONDS * 1000)
    problems.push(
      `ACK_SECRET_PREVIOUS_UNTIL: is further ahead than ACK_TOKEN_TTL_SECONDS (${e.ACK_TOKEN_TTL_SECONDS} s) from now; no link signed with the previous secret lives longer, so set at most now + that (a time in milliseconds read as seconds lands here too)`,
    );
  const scheduler = [e.ESCALATION_SCHEDULE_GROUP, e.ESCALATION_FUNCTION_ARN, e.ESCALATION_ROLE_ARN].filter(
    Boolean,
  ).length;
  if (scheduler > 0 && scheduler < 3)
    problems.push(
      'ESCALATION_SCHEDULE_GROUP: set ESCALATION_SCHEDULE_GROUP, ESCALATION_FUNCTION_ARN and ESCALATION_ROLE_ARN together, or none',
    );
  const missing = [!e.PUBLIC_URL && 'PUBLIC_URL', !e.ACK_SECRET && 'ACK_SECRET'].filter(Boolean);
  // Without acknowledgement links nobody can stop an escalation: every critical alert would escalate.
  if (target && missing.length)
    problems.push(
      `${target}: escalation needs acknowledgement links, but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set (every critical alert would escalate, since nobody could acknowledge it)`,
    );
  if (e.ESCALATION_DEAD_LETTER_QUEUE_ARN && scheduler === 0)
    problems.push(
      'ESCALATION_DEAD_LETTER_QUEUE_ARN: set, but the scheduler settings (ESCALATION_SCHEDULE_GROUP, ...) are not',
    );
  return problems;
}

/** `DATA_DIR` is the embedded store's folder: a DynamoDB table elsewhere makes it meaningless. */
function dataDirProblems(e: z.infer<typeof envSchema>, env: Record<string, string | undefined>): string[] {
  if (!e.DATA_DIR) return [];
  const other = env.AWS_ENDPOINT_URL_DYNAMODB ? 'AWS_ENDPOINT_URL_DYNAMODB' : e.TABLE_NAME ? 'TABLE_NAME' : undefined;
  return other
    ? [
        `DATA_DIR: set together with ${other}; choose one (DATA_DIR keeps the embedded store in a folder, ${other} uses a DynamoDB table)`,
      ]
    : [];
}

/**
 * A routing-file instance with `urgent` (the Feishu app's) acts on escalations, buzzing the people its card
 * mentions: without an escalation target there are none.
 */
function urgentProblems(escalation: boolean, routing: RoutingConfig | undefined): string[] {
  if (escalation) return [];
  return (routing?.channels ?? []).flatMap((c) =>
    'urgent' in c && c.urgent
      ? [
          `ROUTING_FILE: channels.${c.name}.urgent: set, but escalation is off (set ESCALATION_SNS_TOPIC_ARN, ESCALATION_SLACK_WEBHOOK_URL or ESCALATION_CHANNELS: urgent escalates a card nobody acknowledged in ESCALATION_DELAY_SECONDS)`,
        ]
      : [],
  );
}

/**
 * `ESCALATION_CHANNELS`, checked against the channel instances: the routing file's and the environment's
 * (`slack`, `pagerduty`, …). A name that is neither adds a problem naming it and the instances there are.
 * @param routing `undefined` when `ROUTING_FILE` is unset or failed to load (its own problems name why)
 * @returns the names, each once, in the setting's order
 */
function escalationChannelNames(
  e: z.infer<typeof envSchema>,
  envChannels: ChannelInstance[],
  routing: RoutingConfig | undefined,
  problems: string[],
): string[] {
  const names = [...new Set(e.ESCALATION_CHANNELS ?? [])];
  if (e.ROUTING_FILE && !routing) return names;
  const known = [...envChannels, ...(routing?.channels ?? [])].map((c) => c.name);
  for (const name of names.filter((n) => !known.includes(n)))
    problems.push(
      `ESCALATION_CHANNELS: no channel instance named "${name}" (${known.length ? `known: ${known.join(', ')}` : 'none: name the instances of ROUTING_FILE'})`,
    );
  return names;
}

/** Heartbeat settings that mean nothing with the dead-man's switch off. */
function heartbeatProblems(e: z.infer<typeof envSchema>): string[] {
  if (e.HEARTBEAT_ALERTNAME) return [];
  return (['HEARTBEAT_EXTERNAL_URLS', 'HEARTBEAT_FINGERPRINTS'] as const)
    .filter((name) => e[name])
    .map((name) => `${name}: set, but HEARTBEAT_ALERTNAME="" turns heartbeats off`);
}

/**
 * Loads `ROUTING_FILE`, looking its secret references up in `env`. Its problems join the others as
 * `ROUTING_FILE: <file>:<line>: <field>: <problem>`.
 */
function loadRouting(
  file: string | undefined,
  env: Record<string, string | undefined>,
  envChannels: ChannelInstance[],
  problems: string[],
): RoutingConfig | undefined {
  if (!file) return undefined;
  const { loadRoutingFile, RoutingError } = routingReader();
  try {
    return loadRoutingFile(file, { settings: env, envChannels: envChannels.map((c) => c.name) });
  } catch (err) {
    if (!(err instanceof RoutingError)) throw err;
    problems.push(...err.problems.map((p) => `ROUTING_FILE: ${p}`));
    return undefined;
  }
}
