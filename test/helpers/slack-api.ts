/**
 * A loopback Slack Web API: answers `chat.postMessage` and `chat.update` as Slack does (HTTP 200,
 * JSON `{ ok, channel, ts }`), numbering message timestamps, and records each call decoded from the
 * form body `@slack/web-api` sends (`application/x-www-form-urlencoded`, objects as JSON strings).
 * @see https://api.slack.com/web#posting_json
 */
import { startLoopback, type Loopback, type RecordedRequest, type ScriptedReply } from './loopback.js';

/** The channel id the fake answers with, whatever channel name was asked for. */
export const SLACK_CHANNEL_ID = 'C0ALERTS01';

export interface SlackCall {
  /** `chat.postMessage` or `chat.update`. */
  method: string;
  authorization: string | undefined;
  contentType: string | undefined;
  /** The form fields; `blocks` parsed from its JSON. */
  form: Record<string, string>;
  blocks: { type: string; [k: string]: unknown }[];
}

export interface FakeSlackApi {
  /** Base URL for `SLACK_API_URL` (ends in `/api/`). */
  url: string;
  server: Loopback;
  calls(): SlackCall[];
  close(): Promise<void>;
}

/** Decodes one recorded request. */
export function slackCall(request: RecordedRequest): SlackCall {
  const form = Object.fromEntries(new URLSearchParams(request.body.toString('utf8')));
  return {
    method: request.path.replace(/^\/api\//, ''),
    authorization: request.headers.authorization,
    contentType: request.headers['content-type'],
    form,
    blocks: form.blocks ? (JSON.parse(form.blocks) as SlackCall['blocks']) : [],
  };
}

/** Starts the fake; scripted replies (`server.reply`) go before the default answers. */
export async function startFakeSlackApi(): Promise<FakeSlackApi> {
  let seq = 0;
  const answer = (request: RecordedRequest): ScriptedReply => {
    const call = slackCall(request);
    const ts = call.method === 'chat.update' ? call.form.ts : `1764500000.${String(++seq).padStart(6, '0')}`;
    return {
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ ok: true, channel: SLACK_CHANNEL_ID, ts }),
    };
  };
  const server = await startLoopback(answer);
  return {
    url: `${server.url}/api/`,
    server,
    calls: () => server.requests.map(slackCall),
    close: () => server.close(),
  };
}

/** A Web API error reply: HTTP 200 with `ok: false`, as Slack answers them. */
export const slackError = (error: string): ScriptedReply => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ ok: false, error }),
});
