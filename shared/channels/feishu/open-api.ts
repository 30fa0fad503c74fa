/**
 * The Feishu (Lark) Open API calls of the Feishu app, as documented HTTP calls through the project's own
 * client (`core/http-request.ts`: `node:http`, no redirects followed, the delivery's signal on every request).
 *
 * Why not the official `@larksuiteoapi/node-sdk` (1.74.0): its `Client` carries every API of the
 * platform and does not tree-shake; bundled for Lambda with esbuild (ESM, minified) a bare `new Client()`
 * is 1.96 MB and took ~880 ms to import on this machine, against a receiver bundle of ~0.6 MB; it brings
 * axios, protobufjs and ws with it. The six calls below are a few lines each over the documented wire.
 *
 * `tenant_access_token` (2 h) is cached per app and fetched again {@link TOKEN_REFRESH_MARGIN_S} before it
 * expires (Feishu hands out a new one in the last 30 minutes); callers during a fetch share it. A call
 * answered with an expired-token code refreshes it and is tried once more. Errors: `api-errors.ts`.
 * @see https://open.feishu.cn/document/server-docs/authentication-management/access-token/tenant_access_token_internal
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/create
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/reply
 * @see https://open.feishu.cn/document/server-docs/im-v1/message-card/patch
 * @see https://open.feishu.cn/document/server-docs/im-v1/buzz-messages/urgent_app
 * @see https://open.feishu.cn/document/server-docs/contact-v3/user/batch_get_id
 * @see https://open.feishu.cn/document/server-docs/contact-v3/user/get
 */
import { httpRequest, type HttpAnswer } from '../../core/http-request.js';
import { Secret } from '../../core/secret.js';
import { DeliveryError } from '../channel.js';
import { MAX_REPLY_BYTES } from '../http.js';
import { FEISHU_TOKEN_CODES, feishuApiError, type FeishuAppSettingNames } from './api-errors.js';

/** The Open API's base URL for Feishu tenants (`FEISHU_API_URL`; Lark tenants use `https://open.larksuite.com/open-apis/`). */
export const FEISHU_API_URL = 'https://open.feishu.cn/open-apis/';
/** How long before its expiry a token is replaced, seconds (Feishu issues a new one in its last 30 minutes). */
export const TOKEN_REFRESH_MARGIN_S = 10 * 60;
/** `uuid` of a send or reply, characters. @see https://open.feishu.cn/document/server-docs/im-v1/message/create */
export const FEISHU_MAX_UUID_CHARS = 50;
/** Entries of one `batch_get_id` request. @see https://open.feishu.cn/document/server-docs/contact-v3/user/batch_get_id */
export const FEISHU_MAX_EMAILS_PER_LOOKUP = 50;

/** Feishu's urgent (加急) kinds: in the app, plus SMS, plus a phone call (the last two use the tenant's paid quota). */
export type UrgentKind = 'app' | 'sms' | 'phone';

export interface FeishuAppOptions {
  /** Prefixed to error messages (the channel instance, or `feishu-app`). */
  name: string;
  appId: string;
  appSecret: Secret;
  /** Base URL ending in `/` (default {@link FEISHU_API_URL}). */
  apiUrl?: string;
  settings: FeishuAppSettingNames;
  /** Epoch milliseconds. */
  now?: () => number;
}

interface Reply {
  status: number;
  code?: number;
  msg?: string;
  data?: Record<string, unknown>;
  /** The whole JSON body (the token endpoint answers its fields at the top level). */
  body?: Record<string, unknown>;
  resetSeconds?: number;
}

/** One Open API call: what is sent, and its name for error messages (`send`, `reply`, `token`, …). */
interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH';
  /** Under the base URL, with its query. */
  path: string;
  /** Sent as JSON; none for a GET. */
  body?: unknown;
  call: string;
}

/** One Feishu app's API client: its token cache and the calls the channel, the callback and the contact lookups make. */
export class FeishuOpenApi {
  readonly #o: FeishuAppOptions;
  readonly #base: string;
  readonly #now: () => number;
  #token?: { value: Secret; refreshAtMs: number };
  #fetching?: Promise<Secret>;

  constructor(options: FeishuAppOptions) {
    this.#o = options;
    this.#base = options.apiUrl ?? FEISHU_API_URL;
    this.#now = options.now ?? Date.now;
  }

  get name(): string {
    return this.#o.name;
  }

  /**
   * Fetches the app's token, as every call does first: what a start-up check runs, so wrong credentials or
   * the wrong domain (`FEISHU_API_URL` of a Lark tenant) show before the first alert.
   * @throws the token request's {@link DeliveryError}, naming the settings to fix
   */
  async checkCredentials(signal: AbortSignal): Promise<void> {
    await this.#tenantToken(signal);
  }

  /** Sends a card to a chat; `uuid` makes a repeated send (a retry, a send after a crash) return the first message. */
  async sendCard(chatId: string, card: object, uuid: string, signal: AbortSignal): Promise<{ messageId: string }> {
    const body = { receive_id: chatId, msg_type: 'interactive', content: JSON.stringify(card), uuid };
    const data = await this.#call(
      { method: 'POST', path: 'im/v1/messages?receive_id_type=chat_id', body, call: 'send' },
      signal,
    );
    return { messageId: messageIdOf(data, this.#o.name) };
  }

  /**
   * Replies to a message with a card, in its thread when `inThread` (the chat may refuse threads: `FEISHU_NO_THREAD`);
   * `uuid` makes a repeated reply return the first.
   */
  async replyCard(
    messageId: string,
    card: object,
    { uuid, inThread }: { uuid: string; inThread: boolean },
    signal: AbortSignal,
  ): Promise<void> {
    const body = { msg_type: 'interactive', content: JSON.stringify(card), reply_in_thread: inThread, uuid };
    const path = `im/v1/messages/${encodeURIComponent(messageId)}/reply`;
    await this.#call({ method: 'POST', path, body, call: 'reply' }, signal);
  }

  /** Updates a sent card in place for everyone (the card must declare `config.update_multi: true`, before and after). */
  async updateCard(messageId: string, card: object, signal: AbortSignal): Promise<void> {
    const path = `im/v1/messages/${encodeURIComponent(messageId)}`;
    await this.#call({ method: 'PATCH', path, body: { content: JSON.stringify(card) }, call: 'update' }, signal);
  }

  /**
   * Escalates a message the bot sent with Feishu's urgent (加急) API to users in its chat.
   * @returns the ids Feishu refused (not in the chat)
   */
  async urgent(
    messageId: string,
    kind: UrgentKind,
    users: { type: 'open_id' | 'user_id'; ids: string[] },
    signal: AbortSignal,
  ): Promise<string[]> {
    const path = `im/v1/messages/${encodeURIComponent(messageId)}/urgent_${kind}?user_id_type=${users.type}`;
    const body = { user_id_list: users.ids };
    const data = await this.#call({ method: 'PATCH', path, body, call: `urgent_${kind}` }, signal);
    const invalid = data?.invalid_user_id_list;
    return Array.isArray(invalid) ? invalid.filter((x): x is string => typeof x === 'string') : [];
  }

  /** The open_id of each email (at most {@link FEISHU_MAX_EMAILS_PER_LOOKUP}); an email of nobody in the tenant is absent. */
  async openIdsByEmail(emails: string[], signal: AbortSignal): Promise<Map<string, string>> {
    const body = { emails, include_resigned: false };
    const path = 'contact/v3/users/batch_get_id?user_id_type=open_id';
    const data = await this.#call({ method: 'POST', path, body, call: 'lookup' }, signal);
    const found = new Map<string, string>();
    for (const entry of Array.isArray(data?.user_list) ? data.user_list : []) {
      const { email, user_id: id } = (entry ?? {}) as { email?: unknown; user_id?: unknown };
      if (typeof email === 'string' && typeof id === 'string' && id) found.set(email.toLowerCase(), id);
    }
    return found;
  }

  /** A user's display name (`contact:user.base:readonly`); `undefined` when the answer has none. */
  async userName(openId: string, signal: AbortSignal): Promise<string | undefined> {
    const path = `contact/v3/users/${encodeURIComponent(openId)}?user_id_type=open_id`;
    const data = await this.#call({ method: 'GET', path, call: 'user' }, signal);
    const name = (data?.user as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' && name ? name : undefined;
  }

  /** Calls with the tenant token; an expired-token answer refreshes it and tries once more. */
  async #call(request: ApiRequest, signal: AbortSignal) {
    for (let attempt = 0; ; attempt++) {
      const token = await this.#tenantToken(signal);
      const reply = await this.#request(request, signal, token);
      if (reply.code === 0 && reply.status >= 200 && reply.status < 300) return reply.data;
      if (attempt === 0 && reply.code !== undefined && FEISHU_TOKEN_CODES.has(reply.code)) {
        if (this.#token?.value === token) this.#token = undefined;
        continue;
      }
      throw feishuApiError(this.#o.name, reply, this.#o.settings, request.call);
    }
  }

  /** The cached token, or a new one when it is about to expire. */
  async #tenantToken(signal: AbortSignal): Promise<Secret> {
    if (this.#token && this.#now() < this.#token.refreshAtMs) return this.#token.value;
    this.#fetching ??= this.#fetchToken(signal).finally(() => (this.#fetching = undefined));
    return this.#fetching;
  }

  async #fetchToken(signal: AbortSignal): Promise<Secret> {
    const body = { app_id: this.#o.appId, app_secret: this.#o.appSecret.reveal() };
    const path = 'auth/v3/tenant_access_token/internal';
    const reply = await this.#request({ method: 'POST', path, body, call: 'token' }, signal);
    const token = reply.body?.tenant_access_token;
    const expire = reply.body?.expire;
    if (reply.code !== 0 || typeof token !== 'string' || !token || typeof expire !== 'number')
      throw feishuApiError(this.#o.name, { ...reply, code: reply.code ?? undefined }, this.#o.settings, 'token');
    const margin = Math.min(TOKEN_REFRESH_MARGIN_S, expire / 2);
    // A Secret: a bearer credential for two hours, kept out of every log line and response like the app secret.
    const value = new Secret(token);
    this.#token = { value, refreshAtMs: this.#now() + (expire - margin) * 1000 };
    return value;
  }

  /** One request, with the token when given; its answer parsed (not yet judged: a non-zero `code` is returned). */
  async #request({ method, path, body, call }: ApiRequest, signal: AbortSignal, token?: Secret): Promise<Reply> {
    let answer: HttpAnswer;
    try {
      answer = await httpRequest(`${this.#base}${path}`, {
        method,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          ...(token && { authorization: `Bearer ${token.reveal()}` }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
        signal,
      });
    } catch (err) {
      throw transportError(this.#o.name, call, err, signal.aborted);
    }
    let text: string;
    try {
      text = await answer.text(MAX_REPLY_BYTES);
    } catch (err) {
      throw transportError(this.#o.name, call, err, signal.aborted);
    }
    return parseReply(answer, text);
  }
}

function parseReply(answer: HttpAnswer, text: string): Reply {
  const reset = Number(answer.header('x-ogw-ratelimit-reset'));
  const reply: Reply = { status: answer.status, ...(Number.isFinite(reset) && reset >= 0 && { resetSeconds: reset }) };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return reply;
  }
  if (json === null || typeof json !== 'object') return reply;
  const body = json as Record<string, unknown>;
  return {
    ...reply,
    body,
    ...(typeof body.code === 'number' && { code: body.code }),
    ...(typeof body.msg === 'string' && { msg: body.msg }),
    ...(typeof body.data === 'object' && body.data !== null && { data: body.data as Record<string, unknown> }),
  };
}

function messageIdOf(data: Record<string, unknown> | undefined, name: string): string {
  const id = data?.message_id;
  // Sent, but no id to update it by: retrying with the same uuid returns the same message, with its id.
  if (typeof id !== 'string' || !id)
    throw new DeliveryError(`${name}: Feishu send answered without message_id`, { retryable: true });
  return id;
}

/** A request that got no answer: retryable (its uuid keeps a retried send from posting twice). */
function transportError(name: string, call: string, err: unknown, aborted: boolean): DeliveryError {
  const code = (err as { code?: unknown })?.code;
  const why = aborted ? 'timed out or was aborted' : `failed (${typeof code === 'string' ? code : 'network error'})`;
  return new DeliveryError(`${name}: Feishu ${call} ${why}`, {
    retryable: true,
    reason: aborted ? 'timeout' : 'network',
  });
}
