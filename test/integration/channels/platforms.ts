/**
 * Loopback stand-ins for Slack, Feishu and SNS that enforce the platforms' documented limits and
 * answer the way the platforms do, so a message that would be rejected in production fails here:
 * - Slack incoming webhook: `200 ok`; `400 invalid_blocks` beyond 50 blocks, a header over 150 or a
 *   text object over 3,000 characters, a button whose `url` is over 3,000 or `text` over 75 characters;
 *   `400 no_text` without `text`; `429 rate_limited` with `Retry-After`.
 * - Feishu custom bot: HTTP 200 with `code` 0; `code` 19021 for a bad or stale signature, 19024 when
 *   the keyword is missing, 11232 when rate-limited; HTTP 400 for a body over 20 KB (bytes).
 * - SNS `Publish` (awsQuery): `InvalidParameter` for a bad Subject, a Message over 256 KiB with its
 *   attributes, a JSON structure without `default`, FIFO without ids; FIFO deduplication for 5 minutes.
 * @see https://api.slack.com/reference/block-kit/blocks
 * @see https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot
 * @see https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 */
import { createHmac, randomUUID } from 'node:crypto';
import { startLoopback, type Loopback, type RecordedRequest, type ScriptedReply } from '../../helpers/loopback.js';
import { decodePublish, type DecodedPublish } from '../../helpers/sns-server.js';

const text = (status: number, body: string, headers: Record<string, string> = {}): ScriptedReply => ({
  status,
  headers: { 'content-type': 'text/plain', ...headers },
  body,
});
const json = (body: unknown, status = 200): ScriptedReply => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

export interface SlackPlatform {
  url: string;
  server: Loopback;
  /** Accepted messages, parsed. */
  accepted: {
    text: string;
    blocks: { type: string; text?: { text: string }; elements?: { text: string; url?: string }[] }[];
  }[];
  /** When each request arrived, epoch milliseconds. */
  arrivals: number[];
  /** The next `n` requests get `429 rate_limited` with `Retry-After: seconds`. */
  rateLimit(n: number, seconds: number): void;
  /**
   * Refuses every body for which `rule` returns an error code, with `400 <code>` (or the status given):
   * Slack's content checks are not all documented, and this stands in for one we could not predict.
   */
  refuse(rule: ((rawBody: string) => string | { status: number; code: string } | undefined) | undefined): void;
  close(): Promise<void>;
}

function slackProblem(body: SlackPlatform['accepted'][number] | undefined): string | undefined {
  if (!body || typeof body.text !== 'string' || body.text === '') return 'no_text';
  if (body.text.length > 40_000) return 'invalid_payload';
  const blocks = body.blocks ?? [];
  if (blocks.length > 50) return 'invalid_blocks';
  for (const b of blocks) {
    if (b.type === 'header' && (b.text?.text.length ?? 0) > 150) return 'invalid_blocks';
    if (b.type === 'section' && (!b.text || b.text.text.length === 0 || b.text.text.length > 3000))
      return 'invalid_blocks';
    if (b.type === 'context' && (!b.elements || b.elements.length > 10 || b.elements.some((e) => e.text.length > 3000)))
      return 'invalid_blocks';
    if (b.type === 'actions' && !validActions(b.elements as unknown as SlackButton[] | undefined))
      return 'invalid_blocks';
    if (!['header', 'section', 'context', 'divider', 'actions'].includes(b.type)) return 'invalid_blocks';
  }
  return undefined;
}

type SlackButton = { type?: string; text?: { text?: string }; url?: string };

/** An actions block: 1–25 link buttons, text 1–75 and `url` 1–3,000 characters. @see https://api.slack.com/reference/block-kit/block-elements#button */
function validActions(elements: SlackButton[] | undefined): boolean {
  if (!elements?.length || elements.length > 25) return false;
  return elements.every(
    (e) =>
      e.type === 'button' &&
      (e.text?.text?.length ?? 0) >= 1 &&
      (e.text?.text?.length ?? 0) <= 75 &&
      (e.url?.length ?? 0) >= 1 &&
      (e.url?.length ?? 0) <= 3000,
  );
}

/** Starts the Slack stand-in; the webhook URL is `${url}/services/T000/B000/XXXX`. */
export async function startSlackPlatform(): Promise<SlackPlatform> {
  const accepted: SlackPlatform['accepted'] = [];
  const arrivals: number[] = [];
  let limited = 0;
  let retryAfter = 1;
  let refusal: Parameters<SlackPlatform['refuse']>[0];
  const server = await startLoopback((request) => {
    arrivals.push(Date.now());
    if (limited > 0) {
      limited--;
      return text(429, 'rate_limited', { 'retry-after': String(retryAfter) });
    }
    const refused = refusal?.(request.body.toString('utf8'));
    if (refused) return typeof refused === 'string' ? text(400, refused) : text(refused.status, refused.code);
    let body: SlackPlatform['accepted'][number] | undefined;
    try {
      body = JSON.parse(request.body.toString('utf8')) as typeof body;
    } catch {
      return text(400, 'invalid_payload');
    }
    const problem = slackProblem(body);
    if (problem) return text(400, problem);
    accepted.push(body!);
    return text(200, 'ok');
  });
  return {
    url: `${server.url}/services/T000/B000/XXXX`,
    server,
    accepted,
    arrivals,
    rateLimit: (n, seconds) => {
      limited = n;
      retryAfter = seconds;
    },
    refuse: (rule) => void (refusal = rule),
    close: () => server.close(),
  };
}

/** Feishu's request body limit, bytes. */
const FEISHU_BODY_LIMIT = 20 * 1024;

export interface FeishuPlatform {
  url: string;
  server: Loopback;
  accepted: {
    card: {
      header: { title: { content: string }; template: string };
      elements: { tag: string; text?: { content: string } }[];
    };
  }[];
  /** The next `n` requests get HTTP 200 with this rate-limit code. */
  rateLimit(n: number, code?: 9499 | 11232): void;
  /**
   * Refuses, with HTTP 200 and the returned `code` and `msg`, every (correctly signed) body for which
   * `rule` returns one: stands in for a content check we could not predict.
   */
  refuse(rule: ((rawBody: string) => { code: number; msg: string } | undefined) | undefined): void;
  close(): Promise<void>;
}

/** Every text a reader sees on a card: the `content` of its title, texts and buttons (not links or ids). */
function cardText(card: unknown): string[] {
  if (Array.isArray(card)) return card.flatMap(cardText);
  if (typeof card !== 'object' || card === null) return [];
  return Object.entries(card).flatMap(([key, value]) =>
    key === 'content' && typeof value === 'string' ? [value] : cardText(value),
  );
}

/**
 * Starts the Feishu stand-in; with `secret`, requests must be signed within an hour of `now()`;
 * with `keyword`, the card's text must contain it (keyword security: a keyword in a link or id does not count).
 */
export async function startFeishuPlatform(
  options: { secret?: string; keyword?: string; now?: () => number } = {},
): Promise<FeishuPlatform> {
  const accepted: FeishuPlatform['accepted'] = [];
  let limited = 0;
  let limitCode = 11232;
  let refusal: ((rawBody: string) => { code: number; msg: string } | undefined) | undefined;
  const now = options.now ?? (() => Date.now());
  const server = await startLoopback((request: RecordedRequest) => {
    if (request.body.length > FEISHU_BODY_LIMIT) return json({ code: 9499, msg: 'Bad Request', data: {} }, 400);
    if (limited > 0) {
      limited--;
      return json({ code: limitCode, msg: 'request trigger frequency limit', data: {} });
    }
    const body = JSON.parse(request.body.toString('utf8')) as {
      timestamp?: string;
      sign?: string;
      msg_type?: string;
    } & FeishuPlatform['accepted'][number];
    if (options.secret !== undefined) {
      const expected = createHmac('sha256', `${body.timestamp}\n${options.secret}`).update('').digest('base64');
      const fresh = Math.abs(now() / 1000 - Number(body.timestamp)) < 3600;
      if (body.sign !== expected || !fresh)
        return json({
          code: 19021,
          msg: 'sign match fail or timestamp is not within one hour from current time',
          data: {},
        });
    }
    if (options.keyword && !cardText(body.card).some((t) => t.includes(options.keyword!)))
      return json({ code: 19024, msg: 'Key Words Not Found', data: {} });
    const refused = refusal?.(request.body.toString('utf8'));
    if (refused) return json({ ...refused, data: {} });
    if (body.msg_type !== 'interactive' || !body.card?.header?.title?.content || !Array.isArray(body.card.elements)) {
      return json({ code: 11246, msg: 'card content is invalid', data: {} });
    }
    accepted.push(body);
    return json({ StatusCode: 0, StatusMessage: 'success', code: 0, msg: 'success', data: {} });
  });
  return {
    url: `${server.url}/open-apis/bot/v2/hook/0000-hook`,
    server,
    accepted,
    rateLimit: (n, code = 11232) => {
      limited = n;
      limitCode = code;
    },
    refuse: (rule) => void (refusal = rule),
    close: () => server.close(),
  };
}

const SNS_LIMIT = 262_144;
const FIFO_DEDUP_MS = 5 * 60_000;
const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export interface SnsPlatform {
  endpoint: string;
  server: Loopback;
  /** Publishes SNS accepted (FIFO duplicates answer success but are not delivered again). */
  delivered: DecodedPublish[];
  /** The next request fails with this error. */
  failNext(status: number, code: string, message: string): void;
  close(): Promise<void>;
}

function snsProblem(p: Omit<DecodedPublish, 'messageId'>): string | undefined {
  if (!p.TopicArn || !p.Message) return 'Invalid parameter: TopicArn and Message are required';
  if (p.Subject !== undefined && (p.Subject === '' || p.Subject.length > 100 || !/^[\x20-\x7e]+$/.test(p.Subject)))
    return 'Invalid parameter: Subject';
  const attributeBytes = Object.entries(p.MessageAttributes).reduce(
    (n, [k, v]) => n + Buffer.byteLength(k + v.DataType + (v.StringValue ?? '')),
    0,
  );
  if (Buffer.byteLength(p.Message) + attributeBytes > SNS_LIMIT) return 'Invalid parameter: Message too long';
  if (p.params.MessageStructure === 'json') {
    let body: unknown;
    try {
      body = JSON.parse(p.Message);
    } catch {
      return 'Invalid parameter: Message Structure - JSON message body failed to parse';
    }
    if (typeof (body as { default?: unknown }).default !== 'string')
      return 'Invalid parameter: Message Structure - No default entry in JSON message body';
  }
  if (p.TopicArn.endsWith('.fifo') && (!p.MessageGroupId || !p.MessageDeduplicationId))
    return 'Invalid parameter: The MessageGroupId and MessageDeduplicationId parameters are required for FIFO topics';
  return undefined;
}

/** Starts the SNS stand-in (pass `endpoint` to the SDK client). */
export async function startSnsPlatform(): Promise<SnsPlatform> {
  const delivered: DecodedPublish[] = [];
  const faults: { status: number; code: string; message: string }[] = [];
  const seen = new Map<string, { id: string; at: number }>();
  const error = (status: number, code: string, message: string): ScriptedReply => ({
    status,
    headers: { 'content-type': 'text/xml' },
    body: `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>${status >= 500 ? 'Receiver' : 'Sender'}</Type><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error><RequestId>${randomUUID()}</RequestId></ErrorResponse>`,
  });
  const server = await startLoopback((request) => {
    const fault = faults.shift();
    if (fault) return error(fault.status, fault.code, fault.message);
    const publish = decodePublish(request.body);
    const problem = snsProblem(publish);
    if (problem) return error(400, 'InvalidParameter', problem);
    const dedup = publish.TopicArn!.endsWith('.fifo')
      ? `${publish.TopicArn}#${publish.MessageDeduplicationId}`
      : undefined;
    const earlier = dedup ? seen.get(dedup) : undefined;
    let messageId = earlier && Date.now() - earlier.at < FIFO_DEDUP_MS ? earlier.id : undefined;
    if (!messageId) {
      messageId = randomUUID();
      delivered.push({ ...publish, messageId });
      if (dedup) seen.set(dedup, { id: messageId, at: Date.now() });
    }
    return {
      status: 200,
      headers: { 'content-type': 'text/xml' },
      body: `<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>${messageId}</MessageId></PublishResult><ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></PublishResponse>`,
    };
  });
  return {
    endpoint: server.url,
    server,
    delivered,
    failNext: (status, code, message) => void faults.push({ status, code, message }),
    close: () => server.close(),
  };
}

/** The PagerDuty Events API v2 limits the stand-in enforces. */
const PD_EVENT_LIMIT = 512 * 1024;
const PD_SEVERITIES = ['critical', 'error', 'warning', 'info'];

/** One event as PagerDuty accepted it (parsed JSON). */
export interface PagerDutyEventBody {
  routing_key: string;
  event_action: 'trigger' | 'acknowledge' | 'resolve';
  dedup_key?: string;
  payload?: {
    summary: string;
    source: string;
    severity: string;
    timestamp?: string;
    component?: string;
    group?: string;
    class?: string;
    custom_details?: Record<string, unknown>;
  };
  links?: { href: string; text?: string }[];
  client?: string;
  client_url?: string;
}

export interface PagerDutyPlatform {
  /** The Events API endpoint, `${server.url}/v2/enqueue`. */
  url: string;
  server: Loopback;
  /** Events accepted (202), in order. */
  accepted: PagerDutyEventBody[];
  /** The next `n` requests get this status (429 with `Retry-After: seconds` when given; 500, 502, 503). */
  fail(n: number, status: number, retryAfterSeconds?: number): void;
  /** The next request whose raw body matches gets this status, once (after the `fail` faults); several may wait. */
  failWhen(matches: (rawBody: string) => boolean, status: number, retryAfterSeconds?: number): void;
  /** Drops every scripted fault not yet used. */
  clear(): void;
  close(): Promise<void>;
}

/** What PagerDuty's 400 says about an event, or `undefined` when it is valid. */
function pagerDutyProblems(raw: Buffer): string[] {
  if (raw.length > PD_EVENT_LIMIT) return ['Event object is too large'];
  let e: PagerDutyEventBody;
  try {
    e = JSON.parse(raw.toString('utf8')) as PagerDutyEventBody;
  } catch {
    return ['Event object is invalid JSON'];
  }
  const problems: string[] = [];
  if (typeof e.routing_key !== 'string' || e.routing_key.length !== 32)
    problems.push("Length of 'routing_key' is incorrect (should be 32 characters)");
  if (!['trigger', 'acknowledge', 'resolve'].includes(e.event_action))
    problems.push("'event_action' is invalid (must be one of the following: 'trigger', 'acknowledge' or 'resolve')");
  if (e.dedup_key !== undefined && (typeof e.dedup_key !== 'string' || e.dedup_key.length > 255))
    problems.push("'dedup_key' is too long (maximum 255 characters)");
  if (e.event_action !== 'trigger' && !e.dedup_key)
    problems.push("'dedup_key' is required for acknowledge and resolve events");
  if (e.event_action === 'trigger') {
    const p = e.payload;
    if (!p || typeof p.summary !== 'string' || p.summary.length === 0)
      problems.push("'payload.summary' is missing or blank");
    else if (p.summary.length > 1024) problems.push("'payload.summary' is too long (maximum 1024 characters)");
    if (!p?.source) problems.push("'payload.source' is missing or blank");
    if (!p || !PD_SEVERITIES.includes(p.severity))
      problems.push(
        "'payload.severity' is invalid (must be one of the following: 'critical', 'warning', 'error' or 'info')",
      );
    if (p?.timestamp !== undefined && Number.isNaN(Date.parse(p.timestamp)))
      problems.push("'payload.timestamp' is invalid");
    for (const link of e.links ?? []) if (!link.href) problems.push("'links[].href' is missing");
  }
  return problems;
}

/**
 * Starts the PagerDuty stand-in: `202 {"status":"success","message":"Event processed","dedup_key":…}`
 * for a valid event; `400 {"status":"invalid event","message":"Event object is invalid","errors":[…]}`
 * for an invalid one (PagerDuty's documented shape); scripted 429/5xx through `fail`.
 * @see https://developer.pagerduty.com/docs/events-api-v2/overview/#response-codes--retry-logic
 */
export async function startPagerDutyPlatform(): Promise<PagerDutyPlatform> {
  const accepted: PagerDutyEventBody[] = [];
  const faults: { status: number; retryAfter?: number }[] = [];
  const matching: { matches: (rawBody: string) => boolean; status: number; retryAfter?: number }[] = [];
  const server = await startLoopback((request) => {
    let fault = faults.shift();
    const match = fault ? -1 : matching.findIndex((m) => m.matches(request.body.toString('utf8')));
    if (match >= 0) fault = matching.splice(match, 1)[0];
    if (fault) {
      const headers: Record<string, string> =
        fault.retryAfter === undefined ? {} : { 'retry-after': String(fault.retryAfter) };
      if (fault.status === 429) return { status: 429, headers, body: '' };
      if (fault.status === 400)
        return json(
          {
            status: 'invalid event',
            message: 'Event object is invalid',
            errors: ["'payload.summary' is missing or blank"],
          },
          400,
        );
      return json({ status: 'error', message: 'Internal Server Error' }, fault.status);
    }
    if (request.method !== 'POST' || request.path !== '/v2/enqueue') return json({ status: 'not found' }, 404);
    const problems = pagerDutyProblems(request.body);
    if (problems.length)
      return json({ status: 'invalid event', message: 'Event object is invalid', errors: problems }, 400);
    const event = JSON.parse(request.body.toString('utf8')) as PagerDutyEventBody;
    accepted.push(event);
    return json({ status: 'success', message: 'Event processed', dedup_key: event.dedup_key ?? randomUUID() }, 202);
  });
  return {
    url: `${server.url}/v2/enqueue`,
    server,
    accepted,
    fail: (n, status, retryAfterSeconds) =>
      void faults.push(...Array.from({ length: n }, () => ({ status, retryAfter: retryAfterSeconds }))),
    failWhen: (matches, status, retryAfterSeconds) =>
      void matching.push({ matches, status, retryAfter: retryAfterSeconds }),
    clear: () => {
      faults.length = 0;
      matching.length = 0;
    },
    close: () => server.close(),
  };
}
