/**
 * A loopback stand-in of the Feishu Open API, strict about the wire as Feishu documents it, and the
 * other direction too: card callbacks signed and encrypted as the Open Platform sends them.
 *
 * It answers `tenant_access_token/internal` (app id and secret checked; tokens numbered, each valid until
 * the test expires it), `im/v1/messages` send (`receive_id_type=chat_id`), reply and `PATCH` (card JSON
 * in `content` as a string, `update_multi: true` before and after, `uuid` ≤ 50 characters: a repeated
 * uuid returns the first message, as Feishu keeps one message per uuid), `urgent_app|sms|phone`,
 * `contact/v3/users/batch_get_id` and `contact/v3/users/:id`. Every request must carry
 * `content-type: application/json; charset=utf-8` and, past the token endpoint, a valid
 * `Authorization: Bearer t-…`; anything else is a wire violation, recorded and answered with Feishu's
 * code for it. Errors are HTTP 400 with `{code, msg}`, rate limits HTTP 429, as the platform answers.
 * @see https://open.feishu.cn/document/server-docs/im-v1/message/create
 * @see https://open.feishu.cn/document/event-subscription-guide/callback-subscription/receive-and-handle-callbacks
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { startLoopback, type Loopback, type RecordedRequest, type ScriptedReply } from './loopback.js';

export interface FakeMessage {
  messageId: string;
  chatId: string;
  card: Record<string, unknown>;
  uuid?: string;
  /** The card as each PATCH left it, in order. */
  updates: Record<string, unknown>[];
  /** Replies: their card, `reply_in_thread`, `uuid`. */
  replies: { card: Record<string, unknown>; inThread: boolean; uuid?: string }[];
  urgent: { kind: string; idType: string; ids: string[] }[];
}

export interface FakeFeishuOptions {
  appId: string;
  appSecret: string;
  /** Chats the bot is in. */
  chats: string[];
  /** The tenant's directory: email → { open_id, name }. */
  users?: Record<string, { openId: string; name: string }>;
  /** Chats that refuse a reply in a thread (`reply_in_thread: true`) with code 230071. */
  threadless?: string[];
}

export interface FakeFeishuApi {
  /** `FEISHU_API_URL` (ends in `/open-apis/`). */
  url: string;
  server: Loopback;
  messages: FakeMessage[];
  /** Wire format violations seen (each also answered with an error). */
  violations: string[];
  /** Tokens issued so far. */
  tokensIssued(): number;
  /** Makes every token issued so far expired (the next call is answered 99991663). */
  expireTokens(): void;
  /** The next send to be processed and then never answered (a lost answer). */
  loseNextSendAnswer(): void;
  /** The next send to be refused with this code and message (HTTP 400), as Feishu refuses a card. */
  refuseNextSend(code: number, msg: string): void;
  close(): Promise<void>;
}

const json = (status: number, body: unknown): ScriptedReply => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: JSON.stringify(body),
});
const error = (code: number, msg: string, status = 400) => json(status, { code, msg });
const ok = (data: unknown = {}) => json(200, { code: 0, msg: 'success', data });

export async function startFakeFeishuApi(options: FakeFeishuOptions): Promise<FakeFeishuApi> {
  const messages: FakeMessage[] = [];
  const violations: string[] = [];
  const valid = new Set<string>();
  let issued = 0;
  let loseNext = false;
  let refuseNext: { code: number; msg: string } | undefined;
  const users = options.users ?? {};
  const byOpenId = new Map(Object.values(users).map((u) => [u.openId, u]));

  const violation = (what: string) => {
    violations.push(what);
    return error(230001, `Your request contains an invalid request parameter: ${what}`);
  };
  const parseCard = (content: unknown, where: string): Record<string, unknown> | string => {
    if (typeof content !== 'string') return `${where}: content must be a JSON string`;
    let card: Record<string, unknown>;
    try {
      card = JSON.parse(content) as Record<string, unknown>;
    } catch {
      return `${where}: content is not JSON`;
    }
    if (!Array.isArray(card.elements) || typeof card.header !== 'object') return `${where}: not a card JSON 1.0`;
    if ((card.config as { update_multi?: unknown } | undefined)?.update_multi !== true)
      return `${where}: config.update_multi must be true for the card to be updated`;
    if (Buffer.byteLength(content) > 30 * 1024) return `${where}: card over 30 KB`;
    return card;
  };

  const answer = (req: RecordedRequest): ScriptedReply => {
    const url = new URL(req.path, 'http://x');
    const path = url.pathname;
    if (req.headers['content-type'] !== 'application/json; charset=utf-8')
      return violation(`${req.method} ${path}: content-type ${String(req.headers['content-type'])}`);
    let body: Record<string, unknown> = {};
    if (req.method !== 'GET') {
      try {
        body = JSON.parse(req.body.toString('utf8')) as Record<string, unknown>;
      } catch {
        return violation(`${req.method} ${path}: body is not JSON`);
      }
    }
    if (req.method === 'POST' && path === '/open-apis/auth/v3/tenant_access_token/internal') {
      if (body.app_id !== options.appId) return error(10003, 'invalid param');
      if (body.app_secret !== options.appSecret) return error(10015, 'wrong app secret');
      const token = `t-fake${String(++issued).padStart(4, '0')}`;
      valid.add(token);
      return json(200, { code: 0, msg: 'ok', tenant_access_token: token, expire: 7200 });
    }
    const auth = /^Bearer (t-\S+)$/.exec(String(req.headers.authorization ?? ''));
    if (!auth) return error(99991661, 'Missing access token for authorization.');
    if (!valid.has(auth[1]!)) return error(99991663, 'Invalid access token for authorization.');
    return route(req.method, path, url.searchParams, body);
  };

  const route = (
    method: string,
    path: string,
    query: URLSearchParams,
    body: Record<string, unknown>,
  ): ScriptedReply => {
    if (method === 'POST' && path === '/open-apis/im/v1/messages') {
      if (query.get('receive_id_type') !== 'chat_id') return violation('send: receive_id_type must be chat_id');
      if (body.msg_type !== 'interactive') return violation('send: msg_type must be interactive');
      const uuid = body.uuid;
      if (uuid !== undefined && (typeof uuid !== 'string' || uuid.length > 50)) return violation('send: uuid');
      const card = parseCard(body.content, 'send');
      if (typeof card === 'string') return violation(card);
      if (refuseNext) {
        const { code, msg } = refuseNext;
        refuseNext = undefined;
        return error(code, msg);
      }
      const chatId = String(body.receive_id);
      if (!options.chats.includes(chatId)) return error(230002, 'The bot can not be outside the group.');
      const same = uuid && messages.find((m) => m.uuid === uuid);
      if (same) return ok({ message_id: same.messageId, chat_id: same.chatId, msg_type: 'interactive' });
      const message: FakeMessage = {
        messageId: `om_fake${String(messages.length + 1).padStart(4, '0')}`,
        chatId,
        card,
        ...(typeof uuid === 'string' && { uuid }),
        updates: [],
        replies: [],
        urgent: [],
      };
      messages.push(message);
      if (loseNext) {
        loseNext = false;
        return { hang: true };
      }
      return ok({ message_id: message.messageId, chat_id: chatId, msg_type: 'interactive' });
    }
    const m = /^\/open-apis\/im\/v1\/messages\/([^/]+)(?:\/(reply|urgent_app|urgent_sms|urgent_phone))?$/.exec(path);
    const message = m && messages.find((x) => x.messageId === decodeURIComponent(m[1]!));
    if (m && !message) return error(230110, 'Action unavailable as the message has been deleted.');
    if (m && message && method === 'PATCH' && !m[2]) {
      const card = parseCard(body.content, 'update');
      if (typeof card === 'string') return violation(card);
      message.updates.push(card);
      return ok();
    }
    if (m && message && method === 'POST' && m[2] === 'reply') {
      if (body.msg_type !== 'interactive') return violation('reply: msg_type must be interactive');
      const card = parseCard(body.content, 'reply');
      if (typeof card === 'string') return violation(card);
      const uuid = typeof body.uuid === 'string' ? body.uuid : undefined;
      if (uuid && uuid.length > 50) return violation('reply: uuid');
      if (body.reply_in_thread === true && options.threadless?.includes(message.chatId))
        return error(230071, 'This chat does not support replying in a thread.');
      if (!(uuid && message.replies.some((r) => r.uuid === uuid)))
        message.replies.push({ card, inThread: body.reply_in_thread === true, ...(uuid && { uuid }) });
      return ok({ message_id: `${message.messageId}_r${message.replies.length}` });
    }
    if (m && message && method === 'PATCH' && m[2]?.startsWith('urgent_')) {
      const idType = query.get('user_id_type') ?? '';
      const ids = body.user_id_list;
      if (!['open_id', 'user_id'].includes(idType) || !Array.isArray(ids) || ids.length === 0)
        return violation('urgent: user_id_type and user_id_list');
      message.urgent.push({ kind: m[2].slice('urgent_'.length), idType, ids: ids as string[] });
      return ok({ invalid_user_id_list: [] });
    }
    if (method === 'POST' && path === '/open-apis/contact/v3/users/batch_get_id') {
      if (query.get('user_id_type') !== 'open_id' || !Array.isArray(body.emails)) return violation('batch_get_id');
      const list = (body.emails as string[]).map((email) =>
        users[email] ? { email, user_id: users[email].openId } : { email },
      );
      return ok({ user_list: list });
    }
    const u = /^\/open-apis\/contact\/v3\/users\/([^/]+)$/.exec(path);
    if (method === 'GET' && u) {
      const user = byOpenId.get(decodeURIComponent(u[1]!));
      return user ? ok({ user: { open_id: user.openId, name: user.name } }) : error(41050, 'no user authority error');
    }
    return error(99991201, 'resource not find', 404);
  };

  const server = await startLoopback(answer);
  return {
    url: `${server.url}/open-apis/`,
    server,
    messages,
    violations,
    tokensIssued: () => issued,
    expireTokens: () => valid.clear(),
    loseNextSendAnswer: () => void (loseNext = true),
    refuseNextSend: (code, msg) => void (refuseNext = { code, msg }),
    close: () => server.close(),
  };
}

/**
 * A callback body and headers as the Open Platform sends them: the JSON `{"encrypt": base64(iv ‖
 * AES-256-CBC(sha256(key), iv, PKCS#7(payload)))}`, signed with hex sha256(timestamp + nonce + key + body).
 */
export function feishuCallbackRequest(
  payload: unknown,
  encryptKey: string,
  options: { timestampSeconds: number; nonce?: string; signWith?: string },
): { body: string; headers: Record<string, string> } {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', createHash('sha256').update(encryptKey).digest(), iv);
  const encrypted = Buffer.concat([iv, cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
  const body = JSON.stringify({ encrypt: encrypted.toString('base64') });
  return { body, headers: signedHeaders(body, options.signWith ?? encryptKey, options) };
}

/** The three signature headers for `body`. */
export function signedHeaders(
  body: string,
  key: string,
  options: { timestampSeconds: number; nonce?: string },
): Record<string, string> {
  const timestamp = String(options.timestampSeconds);
  const nonce = options.nonce ?? randomBytes(8).toString('hex');
  const signature = createHash('sha256').update(`${timestamp}${nonce}${key}${body}`).digest('hex');
  return {
    'content-type': 'application/json',
    'x-lark-request-timestamp': timestamp,
    'x-lark-request-nonce': nonce,
    'x-lark-signature': signature,
  };
}

/** A `card.action.trigger` callback (schema 2.0) of a click on a button whose `value` is `value`. */
export function cardActionPayload(click: {
  eventId: string;
  appId: string;
  verificationToken: string;
  openId: string;
  messageId: string;
  chatId: string;
  value: unknown;
}) {
  return {
    schema: '2.0',
    header: {
      event_id: click.eventId,
      token: click.verificationToken,
      create_time: `${Date.now()}000`,
      event_type: 'card.action.trigger',
      tenant_key: 'tenant-fake',
      app_id: click.appId,
    },
    event: {
      operator: { tenant_key: 'tenant-fake', open_id: click.openId, union_id: 'on_fake' },
      token: 'c-fake-update-token',
      action: { value: click.value, tag: 'button' },
      host: 'im_message',
      context: { open_message_id: click.messageId, open_chat_id: click.chatId },
    },
  };
}
