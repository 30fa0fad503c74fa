/**
 * Loopback stand-ins for the chat group robots, answering as the platforms do (HTTP 200 and `errcode`):
 * - DingTalk custom robot (`/robot/send?access_token=…`): the token checked (300001 when wrong); with a
 *   signing secret, `timestamp` (ms, within 1 hour) and `sign` (base64 HMAC-SHA256 keyed with the secret
 *   over `timestamp\nsecret`, URL-encoded) checked, 310000 `sign not match` / `invalid timestamp`; with a
 *   keyword, 310000 `keywords not in content` when neither title nor text holds it; 130101 past 20
 *   messages a minute (then for 10 minutes), or on demand; 400105 for another `msgtype`, a markdown
 *   without title or text, or `at` not an object of lists.
 * - WeCom group robot (`/cgi-bin/webhook/send?key=…`): the key checked (93000 `invalid webhook url`),
 *   `markdown.content` at most 4,096 bytes (40058), 45009 past 20 messages a minute or on demand.
 * @see https://open.dingtalk.com/document/orgapp/custom-robot-access
 * @see https://developer.work.weixin.qq.com/document/path/91770
 */
import { createHmac } from 'node:crypto';
import { startLoopback, type Loopback, type RecordedRequest, type ScriptedReply } from '../../helpers/loopback.js';

const json = (body: unknown): ScriptedReply => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const PER_MINUTE = 20;

export interface DingTalkBody {
  msgtype: string;
  markdown: { title: string; text: string };
  at?: { atMobiles?: string[]; atUserIds?: string[]; isAtAll?: boolean };
}

export interface RobotPlatform<Body> {
  /** The robot's webhook URL. */
  url: string;
  server: Loopback;
  /** Accepted messages, parsed. */
  accepted: Body[];
  /** The next `n` requests are answered with the rate-limit code. */
  rateLimit(n: number): void;
  close(): Promise<void>;
}

/** Past `PER_MINUTE` requests in the last minute (by `now`), as the platforms count. */
function rateWindow(now: () => number) {
  const times: number[] = [];
  return () => {
    const at = now();
    times.push(at);
    while (times[0]! <= at - 60_000) times.shift();
    return times.length > PER_MINUTE;
  };
}

export const DINGTALK_TOKEN = '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0';

export async function startDingTalkPlatform(
  options: { secret?: string; keyword?: string; now?: () => number } = {},
): Promise<RobotPlatform<DingTalkBody> & { bannedUntil: number }> {
  const now = options.now ?? Date.now;
  const accepted: DingTalkBody[] = [];
  const over = rateWindow(now);
  let limited = 0;
  const state = { bannedUntil: 0 };
  const server = await startLoopback((request: RecordedRequest): ScriptedReply => {
    const url = new URL(request.path, 'http://127.0.0.1');
    if (request.method !== 'POST' || url.pathname !== '/robot/send') return { status: 404, body: 'not found' };
    if (!/^application\/json/.test(String(request.headers['content-type'])))
      return json({ errcode: 40035, errmsg: '缺少参数 json' });
    if (url.searchParams.get('access_token') !== DINGTALK_TOKEN)
      return json({ errcode: 300001, errmsg: 'token is not exist' });
    if (options.secret !== undefined) {
      const timestamp = url.searchParams.get('timestamp') ?? '';
      // The raw query must carry the sign URL-encoded: `+`, `/` and `=` of base64 never appear in it.
      const rawSign = /[?&]sign=([^&]*)/.exec(request.path)?.[1] ?? '';
      const expected = createHmac('sha256', options.secret).update(`${timestamp}\n${options.secret}`).digest('base64');
      if (!/^\d{13}$/.test(timestamp) || Math.abs(now() - Number(timestamp)) > 3_600_000)
        return json({ errcode: 310000, errmsg: 'invalid timestamp' });
      if (/[+/=]/.test(rawSign) || decodeURIComponent(rawSign) !== expected)
        return json({ errcode: 310000, errmsg: 'sign not match' });
    }
    if (now() < state.bannedUntil || limited > 0 || over()) {
      if (limited > 0) limited--;
      else if (now() >= state.bannedUntil) state.bannedUntil = now() + 10 * 60_000;
      return json({ errcode: 130101, errmsg: 'send too fast, exceed 20 times per minute' });
    }
    const body = JSON.parse(request.body.toString('utf8')) as DingTalkBody;
    const at = body.at;
    const lists = (v: unknown) => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
    if (
      body.msgtype !== 'markdown' ||
      !body.markdown?.title ||
      !body.markdown.text ||
      (at !== undefined && (!lists(at.atMobiles) || !lists(at.atUserIds)))
    )
      return json({ errcode: 400105, errmsg: 'unsupported msgtype or invalid message' });
    if (options.keyword && !`${body.markdown.title}${body.markdown.text}`.includes(options.keyword))
      return json({ errcode: 310000, errmsg: 'keywords not in content' });
    accepted.push(body);
    return json({ errcode: 0, errmsg: 'ok' });
  });
  return {
    url: `${server.url}/robot/send?access_token=${DINGTALK_TOKEN}`,
    server,
    accepted,
    rateLimit: (n) => void (limited = n),
    get bannedUntil() {
      return state.bannedUntil;
    },
    close: () => server.close(),
  };
}

export const WECOM_KEY = '693a91f6-7a1b-4bc4-97a0-0ec2e1a5a111';
const WECOM_MAX_CONTENT_BYTES = 4096;

export interface WeComBody {
  msgtype: string;
  markdown: { content: string };
}

export async function startWeComPlatform(options: { now?: () => number } = {}): Promise<RobotPlatform<WeComBody>> {
  const accepted: WeComBody[] = [];
  const over = rateWindow(options.now ?? Date.now);
  let limited = 0;
  const server = await startLoopback((request: RecordedRequest): ScriptedReply => {
    const url = new URL(request.path, 'http://127.0.0.1');
    if (request.method !== 'POST' || url.pathname !== '/cgi-bin/webhook/send') return { status: 404, body: '' };
    if (url.searchParams.get('key') !== WECOM_KEY) return json({ errcode: 93000, errmsg: 'invalid webhook url' });
    if (limited > 0 || over()) {
      if (limited > 0) limited--;
      return json({ errcode: 45009, errmsg: 'api freq out of limit' });
    }
    const body = JSON.parse(request.body.toString('utf8')) as WeComBody;
    if (body.msgtype !== 'markdown') return json({ errcode: 40008, errmsg: 'invalid message type' });
    if (!body.markdown?.content) return json({ errcode: 44004, errmsg: 'empty content' });
    if (Buffer.byteLength(body.markdown.content, 'utf8') > WECOM_MAX_CONTENT_BYTES)
      return json({ errcode: 40058, errmsg: 'markdown.content exceed max length 4096' });
    accepted.push(body);
    return json({ errcode: 0, errmsg: 'ok' });
  });
  return {
    url: `${server.url}/cgi-bin/webhook/send?key=${WECOM_KEY}`,
    server,
    accepted,
    rateLimit: (n) => void (limited = n),
    close: () => server.close(),
  };
}
