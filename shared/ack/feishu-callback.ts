/**
 * `POST /v1/feishu/callback`: the Feishu app's callback URL (Events & Callbacks > Callback
 * Configuration). A click on a card's Acknowledge button arrives as `card.action.trigger` (schema 2.0),
 * encrypted and signed; once verified (`shared/channels/feishu/callback.ts`) and its `event_id` claimed
 * (each acted on once: a replay changes nothing), it acknowledges the alerts the button's signed token
 * names — the same token as the page link — as the Feishu user who clicked (their name through the
 * contact API when the app may read it, else their open_id), through the same {@link acknowledge} as
 * the page. "Acknowledge and silence 1 h" also silences them in Alertmanager.
 *
 * Feishu wants the answer within 3 s: the acknowledgement (a few conditional writes) is recorded first,
 * and the answer carries a toast and the clicked card as it now reads (acknowledged by whom, buttons
 * gone), which Feishu puts in place; the follow-ups (a reply in the card's thread, the other channels)
 * go to `defer`, after the answer under `npm start`. In Lambda a returned function is frozen, so they
 * are awaited (as for Slack's button): the card is updated by the follow-up's `PATCH` if the answer came late.
 *
 * Refusals: anything that does not verify (no `FEISHU_ENCRYPT_KEY`, not encrypted, bad or missing
 * signature, older than 5 minutes, wrong Verification Token, another app's, an event id seen before) is
 * 401 and changes nothing; a callback that is not an Acknowledge click is answered `{}`.
 * @see https://open.feishu.cn/document/feishu-cards/card-callback-communication
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Secret } from '../core/secret.js';
import { FEISHU_ACK_ACTION, FEISHU_ACK_SILENCE_ACTION, FEISHU_SILENCE_HOURS } from '../channels/feishu/app-render.js';
import { isFeishuAppChannel } from '../channels/feishu/app-channel.js';
import { verifyFeishuCallback } from '../channels/feishu/callback.js';
import type { FeishuContacts } from '../channels/feishu/contacts.js';
import type { CallbackEventStore } from '../store/callback-events.js';
import { acknowledge, type AckResult } from './acknowledge.js';
import { cleanName, type AckRouteDeps } from './routes.js';
import { linkScope } from './scope.js';
import { type AckClaims, AckTokenError, verifyAckToken } from './token.js';

/** Callback bodies are a few KB. */
const MAX_CALLBACK_BYTES = 64 * 1024;
/** Longest wait for the clicker's name, milliseconds (the whole answer has 3 s). */
const NAME_TIMEOUT_MS = 800;

export interface FeishuCallbackDeps extends AckRouteDeps {
  /** `FEISHU_APP_ID`: callbacks of another app are refused. */
  appId: string;
  /** `FEISHU_ENCRYPT_KEY`; unset: every callback is refused. */
  encryptKey?: Secret;
  /** `FEISHU_VERIFICATION_TOKEN`, checked when set. */
  verificationToken?: Secret;
  /** Claims each `event_id` once. */
  events: CallbackEventStore;
  /** The app's contact lookups (the clicker's name). */
  contacts: FeishuContacts;
  /** Runs the follow-ups after answering; unset (Lambda): awaited before answering. */
  defer?: (task: () => Promise<void>) => void;
}

type Toast = { type: 'success' | 'info' | 'error'; zh: string; en: string };
const toast = (t: Toast) => ({ type: t.type, content: t.zh, i18n: { zh_cn: t.zh, en_us: t.en } });

/** Builds the sub-app for `FEISHU_CALLBACK_PATH`. */
export function feishuCallbackRoutes(deps: FeishuCallbackDeps): Hono {
  const app = new Hono();
  app.post(
    '/',
    bodyLimit({ maxSize: MAX_CALLBACK_BYTES, onError: (c) => c.json({ error: 'body too large' }, 413) }),
    async (c) => {
      const body = await c.req.text();
      const headers = {
        timestamp: c.req.header('x-lark-request-timestamp'),
        nonce: c.req.header('x-lark-request-nonce'),
        signature: c.req.header('x-lark-signature'),
      };
      const verified = verifyFeishuCallback(headers, body, deps, deps.now());
      const refuse = (reason: string) => {
        deps.logger.warn('feishu callback refused', { status: 401, reason });
        return c.json({ error: 'invalid Feishu callback' }, 401);
      };
      if ('problem' in verified) return refuse(verified.problem);
      if (verified.kind === 'challenge') return c.json({ challenge: verified.challenge });
      if (verified.appId && verified.appId !== deps.appId)
        return refuse('a callback of another app (not FEISHU_APP_ID)');
      if (!(await deps.events.claim('feishu', verified.eventId, deps.now())))
        return refuse(`event ${verified.eventId.slice(0, 64)} was handled before (a replay)`);
      if (verified.eventType !== 'card.action.trigger') return c.json({});
      return handle(c, verified.event, deps);
    },
  );
  return app;
}

/** The fields of `card.action.trigger` this route reads. */
function clickOf(event: Record<string, unknown>) {
  const operator = event.operator as { open_id?: unknown } | undefined;
  const action = event.action as { value?: unknown } | undefined;
  const value = (action?.value ?? {}) as { action?: unknown; token?: unknown };
  const context = event.context as { open_message_id?: unknown } | undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return {
    openId: str(operator?.open_id),
    action: str(value.action),
    token: str(value.token),
    messageId: str(context?.open_message_id),
  };
}

async function handle(c: Context, event: Record<string, unknown>, deps: FeishuCallbackDeps): Promise<Response> {
  const click = clickOf(event);
  if ((click.action !== FEISHU_ACK_ACTION && click.action !== FEISHU_ACK_SILENCE_ACTION) || !click.token)
    return c.json({});
  let claims: AckClaims;
  try {
    claims = verifyAckToken(click.token, deps.links.settings.keys, deps.now());
  } catch (err) {
    if (!(err instanceof AckTokenError)) throw err;
    deps.logger.warn('feishu acknowledgement refused', { reason: err.problem, user: click.openId });
    return c.json({ toast: toast({ type: 'error', zh: '链接已失效，请打开页面认领', en: err.message }) });
  }
  const by = cleanName(await clickerName(click.openId, deps)) || click.openId || 'anonymous';
  const silence = click.action === FEISHU_ACK_SILENCE_ACTION && deps.silences ? FEISHU_SILENCE_HOURS : undefined;
  let result: AckResult;
  try {
    const scope = await linkScope(claims, { sets: deps.links.sets, logger: deps.logger }, Infinity, deps.now());
    result = await acknowledge({ ...claims, fingerprints: scope.fingerprints }, { by, silenceHours: silence }, deps, {
      defer: deps.defer,
    });
  } catch (err) {
    deps.logger.error('feishu acknowledgement failed', { error: err as Error });
    return c.json({
      toast: toast({ type: 'error', zh: '认领失败，未做任何更改，请重试', en: 'Not acknowledged: try again' }),
    });
  }
  deps.logger.info('feishu acknowledgement', { user: click.openId, by, outcomes: result.alerts.map((a) => a.outcome) });
  const clicked = { channel: claims.channel, messageId: click.messageId, by, at: new Date(deps.now()).toISOString() };
  const card = await answerCard(result, clicked, deps);
  return c.json({ toast: toast(outcomeToast(result, by)), ...(card && { card: { type: 'raw', data: card } }) });
}

/** The clicker's name, waited for at most {@link NAME_TIMEOUT_MS}; `undefined` when the contact API does not say. */
async function clickerName(openId: string | undefined, deps: FeishuCallbackDeps): Promise<string | undefined> {
  if (!openId) return undefined;
  return deps.contacts.name(openId, AbortSignal.timeout(NAME_TIMEOUT_MS));
}

/** The toast: acknowledged, or why not (someone else was first, resolved, not known). */
function outcomeToast(result: AckResult, by: string): Toast {
  const outcomes = result.alerts.map((a) => a.outcome);
  if (outcomes.includes('acknowledged')) return { type: 'success', zh: `已认领（${by}）`, en: `Acknowledged (${by})` };
  const first = result.alerts.find((a) => a.outcome === 'already acknowledged');
  const who = first && 'record' in first ? first.record.acknowledgement?.by : undefined;
  if (who) return { type: 'info', zh: `已由 ${who} 认领`, en: `Already acknowledged by ${who}` };
  if (outcomes.includes('resolved')) return { type: 'info', zh: '告警已恢复', en: 'Already resolved' };
  return { type: 'info', zh: '没有可认领的告警', en: 'Nothing left to acknowledge' };
}

/**
 * The clicked card as it now reads, from the Feishu app channel whose link this was; `undefined` when unknown.
 * @param clicked the link's channel, the card clicked, and who clicked when (the acknowledgement shown when
 *   the record has none)
 */
async function answerCard(
  result: AckResult,
  clicked: { channel: string; messageId: string | undefined; by: string; at: string },
  deps: FeishuCallbackDeps,
): Promise<object | undefined> {
  const { channel: channelName, messageId } = clicked;
  const channel = deps.channels.find((ch) => ch.name === channelName);
  // A resolved card stays as it is: only an acknowledgement (this one or an earlier) changes it.
  const acked = result.alerts.find((a) => a.outcome === 'acknowledged' || a.outcome === 'already acknowledged');
  if (!channel || !isFeishuAppChannel(channel) || !messageId || !acked || !('record' in acked)) return undefined;
  const record = acked.record;
  const who = record.acknowledgement ?? clicked;
  try {
    const fingerprints = result.alerts
      .filter((a) => a.outcome === 'acknowledged' || a.outcome === 'already acknowledged')
      .map((a) => a.fingerprint);
    return await channel.acknowledgedCard(record.groupKey, messageId, { by: who.by, at: who.at, fingerprints });
  } catch (err) {
    deps.logger.warn('feishu card not answered', { channel: channelName, error: (err as Error).message });
    return undefined;
  }
}
