/**
 * The Slack Web API calls of the Slack-app channel (`chat.postMessage`, `chat.update`), through the
 * official `@slack/web-api` client, and the one place where its errors are classified.
 *
 * The client is configured for the pipeline's delivery rules: no retries of its own (`deliver` retries,
 * inside the group's budget; the client's default retries for ~30 minutes), 429 rejected at once with its
 * `Retry-After` (`rejectRateLimitedCalls`; `deliver` honours it within the budget), the per-attempt
 * `AbortSignal` of `deliver` on every request, redirects refused (the token travels in a header), only
 * method names under the configured base URL (`allowAbsoluteUrls: false`), and its logger silenced
 * (channels never log: the pipeline does, with our redaction).
 *
 * The client package (~65 KB minified with its dependencies) is imported on the first call, not with
 * this module, through `web-api-client.ts` (it is CommonJS: that file says why): a Lambda without the
 * Slack app never loads it at cold init. Classifying needs only its error codes, spelled here and
 * checked against its `ErrorCode` enum by the compiler.
 * @see https://docs.slack.dev/tools/node-slack-sdk/web-api/
 * @see https://api.slack.com/methods/chat.postMessage
 * @see https://api.slack.com/methods/chat.update
 */
import type { ErrorCode, LogLevel, Logger as SlackLogger, WebClient } from '@slack/web-api';
import { lazyAsync } from '../../core/lazy.js';
import type { Secret } from '../../core/secret.js';
import { ContentRefusedError, DeliveryError, UNKNOWN_OUTCOME_MESSAGE } from '../channel.js';
import type { SlackBlock } from './index.js';

/** The Web API's base URL (`SLACK_API_URL` overrides it for tests). */
export const SLACK_API_URL = 'https://slack.com/api/';

/**
 * Platform error codes that refuse the message's content (a reduced rendering may pass).
 * @see https://api.slack.com/methods/chat.postMessage#errors
 */
export const SLACK_API_CONTENT_ERRORS: ReadonlySet<string> = new Set([
  'invalid_blocks',
  'invalid_blocks_format',
  'msg_too_long',
  'no_text',
  'too_many_attachments',
  'invalid_attachments',
  'invalid_arguments',
]);
/** Codes that mean the token is wrong, revoked or lacks a scope: fix the token setting. */
const AUTH_ERRORS: ReadonlySet<string> = new Set([
  'invalid_auth',
  'not_authed',
  'token_revoked',
  'token_expired',
  'account_inactive',
  'missing_scope',
  'not_allowed_token_type',
  'no_permission',
  'ekm_access_denied',
]);
/** Codes that mean the channel is wrong or the app is not in it: fix the channel setting (or invite the app). */
const CHANNEL_ERRORS: ReadonlySet<string> = new Set([
  'channel_not_found',
  'not_in_channel',
  'is_archived',
  'restricted_action',
  'restricted_action_read_only_channel',
]);
/** Codes of `chat.update` saying the original message cannot be updated (deleted, too old): post a new one. */
export const SLACK_MESSAGE_GONE: ReadonlySet<string> = new Set([
  'message_not_found',
  'cant_update_message',
  'edit_window_closed',
  'thread_not_found',
]);
/** Codes that are Slack's own trouble: another attempt can help. */
const TRANSIENT_ERRORS: ReadonlySet<string> = new Set([
  'internal_error',
  'fatal_error',
  'service_unavailable',
  'request_timeout',
  'ratelimited',
  'team_added_to_org',
]);

/** Names of the settings an error message tells the operator to fix. */
export interface SlackSettingNames {
  /** e.g. `SLACK_BOT_TOKEN`, or the setting a routing-file instance's `botToken` names. */
  token: string;
  /** e.g. `SLACK_CHANNEL`, or `ROUTING_FILE channels.<name>.channel`. */
  channel: string;
}

/** A message as posted: where it is, and its timestamp id. */
export interface PostedMessage {
  /** Channel id (`C…`) as Slack answered it (the setting may be a name). */
  channel: string;
  /** The message's `ts`, its id within the channel. */
  ts: string;
}

export interface SlackContent {
  text: string;
  blocks: SlackBlock[];
}

/** The two calls the channel makes, each bound to one attempt's signal. */
export interface SlackApi {
  /** `chat.postMessage`; `threadTs` makes it a reply in that thread. */
  post(channel: string, content: SlackContent, signal: AbortSignal, threadTs?: string): Promise<PostedMessage>;
  /** `chat.update` of the message `ts` in `channel` (a channel id). */
  update(channel: string, ts: string, content: SlackContent, signal: AbortSignal): Promise<void>;
}

const silent: SlackLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  setLevel() {},
  getLevel: () => 'error' as LogLevel.ERROR,
  setName() {},
};

/** `@slack/web-api`'s `ErrorCode` values (the compiler checks each against the enum). */
const CODE: { [K in 'RateLimitedError' | 'PlatformError' | 'HTTPError' | 'RequestError']: `${(typeof ErrorCode)[K]}` } =
  {
    RateLimitedError: 'slack_webapi_rate_limited_error',
    PlatformError: 'slack_webapi_platform_error',
    HTTPError: 'slack_webapi_http_error',
    RequestError: 'slack_webapi_request_error',
  };

/** The client, imported once per process on the first call (a chunk of its own in the Lambda bundle). */
const loadWebApi = lazyAsync(() => import('./web-api-client.js'));

/** What {@link createSlackApi} is given. */
export interface SlackApiOptions {
  /** The channel's name, prefixed to error messages. */
  name: string;
  token: Secret;
  /** Base URL ending in `/` (default {@link SLACK_API_URL}). */
  apiUrl?: string;
  /** The client's own per-request time-out, milliseconds (the signal usually ends it first). */
  timeoutMs: number;
  settings: SlackSettingNames;
}

/**
 * @throws nothing here; the calls throw {@link DeliveryError}s classified by {@link classifySlackError}
 */
export function createSlackApi(options: SlackApiOptions): SlackApi {
  const call = async <T>(run: (c: WebClient) => Promise<T>, signal: AbortSignal): Promise<T> => {
    try {
      return await run(await webClient(options, signal));
    } catch (err) {
      throw classifySlackError(err, options.name, options.settings, signal.aborted);
    }
  };
  return {
    post: (channel, content, signal, threadTs) =>
      call((c) => postMessage(c, { channel, content, threadTs }, options.name), signal),
    update: (channel, ts, content, signal) =>
      call(async (c) => {
        await c.chat.update({ channel, ts, text: content.text, blocks: content.blocks });
      }, signal),
  };
}

/**
 * A client for one attempt, configured for the pipeline's delivery rules (this module's header): no
 * retries, 429 rejected at once, redirects refused, `signal` on every request, its logger silenced.
 */
async function webClient(options: SlackApiOptions, signal: AbortSignal): Promise<WebClient> {
  return new (await loadWebApi()).WebClient(options.token.reveal(), {
    slackApiUrl: options.apiUrl ?? SLACK_API_URL,
    logger: silent,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: options.timeoutMs,
    allowAbsoluteUrls: false,
    maxRequestConcurrency: 1,
    // The client's own signal carries its time-out; ours carries the delivery budget. Either ends the request.
    fetch: (url, init) =>
      fetch(url, {
        ...init,
        redirect: 'error',
        signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal,
      }),
  });
}

/**
 * `chat.postMessage`, links not unfurled; `threadTs` makes it a reply in that thread.
 * @throws a retryable {@link DeliveryError} when Slack answers ok without the message's place (`ts`, `channel`)
 */
async function postMessage(
  client: WebClient,
  { channel, content, threadTs }: { channel: string; content: SlackContent; threadTs?: string },
  name: string,
): Promise<PostedMessage> {
  const reply = await client.chat.postMessage({
    channel,
    text: content.text,
    blocks: content.blocks,
    ...(threadTs && { thread_ts: threadTs }),
    unfurl_links: false,
    unfurl_media: false,
  });
  if (!reply.ts || !reply.channel)
    throw new DeliveryError(`${name}: chat.postMessage answered ok without ts or channel`, { retryable: true });
  return { channel: reply.channel, ts: reply.ts };
}

/**
 * Turns what `@slack/web-api` threw into a {@link DeliveryError}, by kind:
 * - 429 (`WebAPIRateLimitedError`): retryable, `rate_limited`, with `Retry-After` in milliseconds;
 * - platform `ratelimited`, `internal_error`, `fatal_error`, …: retryable;
 * - `invalid_auth`, `not_authed`, `token_revoked`, `missing_scope`, …: permanent, naming the token setting;
 * - `channel_not_found`, `not_in_channel`, `is_archived`: permanent, naming the channel setting;
 * - content codes ({@link SLACK_API_CONTENT_ERRORS}): {@link ContentRefusedError};
 * - other platform codes: permanent, `platform_error`, the code quoted;
 * - HTTP 5xx: retryable; other HTTP statuses: permanent; network errors: retryable;
 * - time-outs (`aborted`): retryable with `outcomeUnknown` (Slack may have posted the message).
 * A `DeliveryError` is returned unchanged. Messages never contain the token.
 * @param aborted whether the attempt's signal had fired (a time-out, not a network error)
 */
export function classifySlackError(
  err: unknown,
  name: string,
  settings: SlackSettingNames,
  aborted: boolean,
): DeliveryError {
  if (err instanceof DeliveryError) return err;
  const coded = err as {
    code?: string;
    retryAfter?: number;
    statusCode?: number;
    data?: { error?: string };
    original?: Error;
  };
  switch (coded?.code) {
    case CODE.RateLimitedError:
      return new DeliveryError(`${name}: rate limited by Slack (retry after ${coded.retryAfter} s)`, {
        retryable: true,
        retryAfterMs: (coded.retryAfter ?? 1) * 1000,
        reason: 'rate_limited',
      });
    case CODE.PlatformError:
      return platformError(coded.data?.error ?? 'unknown_error', name, settings);
    case CODE.HTTPError: {
      const status = coded.statusCode ?? 0;
      return new DeliveryError(`${name}: Slack Web API answered HTTP ${status}`, {
        retryable: status >= 500,
        reason: status >= 500 ? 'server_error' : 'client_error',
      });
    }
    case CODE.RequestError:
      return unanswered(name, coded.original, aborted);
    default:
      return new DeliveryError(`${name}: ${(err as Error)?.name ?? 'unknown error'} from the Slack client`, {
        retryable: false,
        reason: 'other',
      });
  }
}

/**
 * A request that got no answer: a network error (retryable), or a time-out (`aborted`). The client does not
 * say whether Slack had the request when the signal fired: it may have posted the message, so a time-out is
 * an unknown outcome (one more try at most, not one per attempt).
 */
function unanswered(name: string, original: Error | undefined, aborted: boolean): DeliveryError {
  if (!aborted)
    return new DeliveryError(`${name}: request failed (${networkCode(original)})`, {
      retryable: true,
      reason: 'network',
    });
  return new DeliveryError(`${name}: ${UNKNOWN_OUTCOME_MESSAGE}`, {
    retryable: true,
    reason: 'timeout',
    outcomeUnknown: true,
  });
}

function platformError(code: string, name: string, settings: SlackSettingNames): DeliveryError {
  const safe = /^[a-z0-9_]{1,64}$/.test(code) ? code : 'unrecognised_error';
  if (code === 'ratelimited')
    return new DeliveryError(`${name}: Slack answered ratelimited`, { retryable: true, reason: 'rate_limited' });
  if (TRANSIENT_ERRORS.has(code))
    return new DeliveryError(`${name}: Slack answered ${safe}`, { retryable: true, reason: 'server_error' });
  if (AUTH_ERRORS.has(code))
    return new DeliveryError(
      `${name}: Slack answered ${safe}: check ${settings.token} (a bot token xoxb-… of an app installed in the workspace, with the chat:write scope)`,
      { retryable: false, reason: 'client_error' },
    );
  if (CHANNEL_ERRORS.has(code)) {
    const invite = code === 'not_in_channel' ? 'invite the app to the channel (/invite @app), or ' : '';
    return new DeliveryError(
      `${name}: Slack answered ${safe}: ${invite}check ${settings.channel} (a channel id such as C0123456789)`,
      { retryable: false, reason: 'client_error' },
    );
  }
  if (SLACK_API_CONTENT_ERRORS.has(code)) return new ContentRefusedError(`${name}: Slack answered ${safe}`);
  return new SlackPlatformError(`${name}: Slack answered ${safe}`, safe);
}

/** A platform error code not classified above (e.g. `message_not_found` of `chat.update`); permanent. */
export class SlackPlatformError extends DeliveryError {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message, { retryable: false, reason: 'platform_error' });
    this.name = 'SlackPlatformError';
  }
}

function networkCode(err: Error | undefined): string {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  return err?.name ?? 'unknown error';
}
