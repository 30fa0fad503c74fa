/**
 * Every error the Feishu Open API documents for the calls the Feishu app makes (token, send, reply,
 * update, urgent, contact), classified in one place: Feishu answers failures with a non-zero `code`
 * (HTTP 200, 400 or 429), and the code, not the status, says what to do:
 * - retryable: rate limits (with `x-ogw-ratelimit-reset`), Feishu's internal errors, a message "being sent";
 * - an expired or invalid `tenant_access_token`: the client refreshes it and tries once more;
 * - permanent, naming the setting to fix: the app's id or secret, the scopes, the chat (bot not in it,
 *   dissolved, not found), the API domain (a Lark tenant on open.feishu.cn);
 * - the content refused ({@link ContentRefusedError}: card too large, an `<at>` of an unknown user,
 *   `@all` not allowed in the chat): `deliver` sends the reduced card, which has no mentions;
 * - the message gone (recalled, deleted, older than 14 days): the channel sends a new card.
 * @see https://open.feishu.cn/document/server-docs/api-call-guide/generic-error-code
 * @see https://open.feishu.cn/document/server-docs/api-call-guide/frequency-control
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/create (its error codes; reply, patch, urgent alike)
 */
import { redactedExcerpt } from '../../core/secret.js';
import { ContentRefusedError, DeliveryError, type DeliveryFailure } from '../channel.js';

/** Names of the settings an error tells the operator to fix. */
export interface FeishuAppSettingNames {
  /** e.g. `FEISHU_APP_ID and FEISHU_APP_SECRET`. */
  credentials: string;
  /** e.g. `FEISHU_CHAT_ID`, or `ROUTING_FILE channels.<name>.chatId`. */
  chat: string;
  /** e.g. `FEISHU_API_URL`. */
  apiUrl: string;
  /** e.g. `ROUTING_FILE channels.<name>.mention`. */
  mention: string;
}

/** "Too many requests", whatever the HTTP status. */
const RATE_LIMITED = new Set([99991400, 230020, 11232, 11233, 11247, 1000004, 1000005, 90217]);
/** Feishu's own trouble, or an operation still in progress: another attempt can help. */
const TRANSIENT = new Set([
  1500, 1503, 1642, 1663, 1665, 1668, 2200, 5000, 10101, 10105, 10500, 1000003, 230049, 18121, 11311,
]);
/** The `tenant_access_token` is missing, expired or not valid: refresh it and try once more. */
export const FEISHU_TOKEN_CODES: ReadonlySet<number> = new Set([99991661, 99991663, 99991664, 99991665, 99991671]);
/** The app's credentials or state: fix the app id, secret or domain. */
const CREDENTIALS = new Map<number, string>([
  [10003, 'the app id or secret is not valid'],
  [10012, 'no app access token could be had for these credentials'],
  [10013, 'no tenant access token could be had for these credentials'],
  [10014, 'the app is disabled'],
  [10015, 'wrong app secret'],
  [20002, 'the app id and secret do not match'],
  [99991543, 'no such app id or app secret'],
  [99991662, 'the app is disabled'],
  [99991673, 'the app is not installed in this tenant'],
  [11209, 'no such app'],
  [11210, 'the app is not installed in this tenant'],
  [99991401, "this host's IP address is not in the app's IP allowlist"],
  [99991403, "the tenant's monthly API quota is used up"],
]);
/** A scope the app lacks: grant it in the developer console and publish a new version. */
const SCOPES = new Map<number, string>([
  [230027, 'im:message:send_as_bot (and for urgent escalation im:message.urgent, …:sms, …:phone)'],
  [99991672, 'the scope the call names'],
  [99991676, 'the scope the call names'],
  [10023, 'im:message.urgent (and im:message.urgent:sms / im:message.urgent:phone for sms or phone)'],
  [11241, 'contact:user.base:readonly'],
]);
/** The chat: the bot is not in it, it does not exist, or it does not let the bot post. */
const CHAT = new Map<number, string>([
  [230002, 'the bot is not in the chat: add the app bot to the group'],
  [10002, 'the bot is not in the chat: add the app bot to the group'],
  [10030, 'the bot is not in the chat: add the app bot to the group'],
  [11201, 'the bot is not in the chat: add the app bot to the group'],
  [230006, "the app's bot ability is off: turn it on and publish a version"],
  [11205, "the app's bot ability is off: turn it on and publish a version"],
  [11240, "the app's bot ability is off: turn it on and publish a version"],
  [232009, 'the chat was dissolved'],
  [230034, 'no such chat_id'],
  [10029, 'no such chat_id'],
  [11213, 'no such chat'],
  [11231, 'no such chat'],
  [99992355, 'no such chat_id'],
  [99992356, 'no such chat_id'],
  [230018, "the group's settings do not let the bot post"],
  [230035, 'the bot may not post in this chat (muted, or blocked by a tenant policy)'],
  [11242, 'the chat is banned'],
  [230013, 'the app is not available to this chat'],
]);
/** The content: a reduced card (no mentions, shorter text) may pass. */
const CONTENT = new Set([230025, 19036, 230099, 230001, 9499, 11235, 230022, 230028, 11248, 11312, 11246, 18054]);
/** The message to update, answer or escalate no longer exists or can no longer be changed. */
export const FEISHU_MESSAGE_GONE: ReadonlySet<number> = new Set([
  230011, 230031, 230110, 99992354, 10020, 11224, 10037,
]);
/** The chat does not take replies in a thread (reply without `reply_in_thread` instead). */
export const FEISHU_NO_THREAD: ReadonlySet<number> = new Set([230071, 230072]);

/** Longest `msg` quoted in an error, characters. */
const MSG_EXCERPT_CHARS = 200;

/** A code Feishu answered that is not classified above as retryable or content; permanent. */
export class FeishuApiError extends DeliveryError {
  /** @param code Feishu's `code`; -1 when the reply was not Feishu's JSON (its HTTP status decided) */
  constructor(
    message: string,
    readonly code: number,
    failure: DeliveryFailure,
  ) {
    super(message, failure);
    this.name = 'FeishuApiError';
  }
}

/**
 * The error of a reply whose `code` is not 0 (or that has none, with a non-2xx status).
 * @param name the channel instance, prefixed to the message
 * @param reply the status, the parsed `code`/`msg` (`undefined` when the body was not Feishu's JSON) and
 *   `x-ogw-ratelimit-reset` (seconds)
 * @param call what was called, for the message (`send`, `update`, `reply`, `urgent_app`, `token`, …)
 */
export function feishuApiError(
  name: string,
  reply: { status: number; code?: number; msg?: string; resetSeconds?: number },
  settings: FeishuAppSettingNames,
  call: string,
): DeliveryError {
  const { status, code } = reply;
  const msg = redactedExcerpt(reply.msg ?? '', MSG_EXCERPT_CHARS);
  const said = `${name}: Feishu ${call} answered ${code === undefined ? `HTTP ${status}` : `code ${code}`}${msg ? `: ${msg}` : ''}`;
  if (code === undefined) {
    const retryable = status >= 500 || status === 429;
    return new FeishuApiError(said, -1, { retryable, reason: retryable ? 'server_error' : 'client_error' });
  }
  return retryableError(said, code, reply) ?? permanentError(said, code, reply.msg ?? '', settings);
}

/** A rate limit (with `x-ogw-ratelimit-reset`, seconds, as the wait) or Feishu's own trouble; else `undefined`. */
function retryableError(
  said: string,
  code: number,
  { status, resetSeconds }: { status: number; resetSeconds?: number },
): FeishuApiError | undefined {
  if (status === 429 || RATE_LIMITED.has(code)) {
    const retryAfterMs = resetSeconds === undefined ? undefined : resetSeconds * 1000;
    return new FeishuApiError(said, code, { retryable: true, retryAfterMs, reason: 'rate_limited' });
  }
  if (TRANSIENT.has(code) || status >= 500)
    return new FeishuApiError(said, code, { retryable: true, reason: 'server_error' });
  return undefined;
}

/** A code another attempt cannot help: the setting to fix when it names one, or the content refused. */
function permanentError(said: string, code: number, msg: string, settings: FeishuAppSettingNames): DeliveryError {
  const fix = settingToFix(code, settings);
  if (fix) return new FeishuApiError(`${said} (${fix})`, code, { retryable: false, reason: 'client_error' });
  if (CONTENT.has(code)) {
    const mention = /100290|invalid user|at\/person|@all|mention/i.test(msg) || code === 11235;
    return new ContentRefusedError(mention ? `${said} (check ${settings.mention})` : said);
  }
  return new FeishuApiError(said, code, { retryable: false });
}

/** What a code of the app's credentials, scopes or chat says to fix, naming the setting; `undefined` for others. */
function settingToFix(code: number, settings: FeishuAppSettingNames): string | undefined {
  const credentials = CREDENTIALS.get(code) ?? (FEISHU_TOKEN_CODES.has(code) ? 'the token was refused' : undefined);
  if (credentials)
    return `${credentials}: check ${settings.credentials}, and ${settings.apiUrl}: a Feishu tenant uses https://open.feishu.cn/open-apis/, a Lark tenant https://open.larksuite.com/open-apis/`;
  const scope = SCOPES.get(code);
  if (scope) return `the app lacks a scope: grant ${scope}`;
  const chat = CHAT.get(code);
  return chat && `${chat}: check ${settings.chat}`;
}
