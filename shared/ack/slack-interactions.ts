/**
 * `POST /v1/slack/interactions`: the Slack app's interactivity request URL. A click on the
 * Acknowledge button of a Slack-app message arrives here as a signed `block_actions` payload; it
 * acknowledges the alerts its signed link token names (the button's `value`), as the Slack user who
 * clicked, through the same {@link acknowledge} as the page (so every channel's follow-up, the
 * PagerDuty `acknowledge` included, follows from it).
 *
 * Slack wants a 200 within 3 seconds. A storm digest's "Acknowledge all N" (a link naming an alert set)
 * records the decision (one conditional write), dispatches the set's steps (`set-job.ts`: an asynchronous
 * invocation in Lambda, in-process under `npm start`) and answers, whatever the set's size; a second
 * click finds the decision and changes nothing. For a link of a few alerts, the acknowledgement itself (a
 * few conditional writes) is done before answering, so the answer says whether it happened; the
 * follow-ups (the thread update, other channels, with their retries) go to `defer`: after the answer
 * under `npm start`. In Lambda a function that has returned is frozen, and work left running may never
 * finish, so `defer` is unset there and the follow-ups are awaited: when they take longer than 3 s, Slack
 * shows the clicker a warning, but the acknowledgement and the message update are done.
 *
 * Refusals: a missing, old (> 5 minutes) or wrong signature is 401 and changes nothing; a payload
 * that is not an Acknowledge click is answered 200 and ignored (Slack sends every interaction of the
 * app here, link buttons included).
 * @see https://api.slack.com/interactivity/handling#acknowledgment_response
 * @see https://api.slack.com/reference/interaction-payloads/block-actions
 */
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import * as z from '../core/zod.js';
import { ACK_ACTION_ID } from '../channels/slack/app-render.js';
import { slackSignatureProblem } from '../channels/slack/signature.js';
import type { Secret } from '../core/secret.js';
import { acknowledge } from './acknowledge.js';
import { startSetAcknowledgement } from './set-job.js';
import { linkScope } from './scope.js';
import { cleanName, type AckRouteDeps } from './routes.js';
import { type AckClaims, AckTokenError, verifyAckToken } from './token.js';
import { SLACK_INTERACTIONS_PATH } from './links.js';

/** Interaction payloads are a few KB; a message's blocks are not echoed beyond Slack's own limits. */
const MAX_INTERACTION_BYTES = 256 * 1024;

export interface SlackInteractionDeps extends AckRouteDeps {
  /** `SLACK_SIGNING_SECRET`. */
  signingSecret: Secret;
  /** Runs the follow-ups after answering; unset (Lambda): awaited before answering. */
  defer?: (task: () => Promise<void>) => void;
}

/** The fields of a `block_actions` payload this route reads; the rest is Slack's and passes through. */
const payloadSchema = z.object({
  type: z.string(),
  user: z.optional(z.object({ id: z.string(), username: z.optional(z.string()), name: z.optional(z.string()) })),
  actions: z.optional(z.array(z.object({ action_id: z.string(), value: z.optional(z.string()) }))),
});

/** Builds the sub-app for {@link SLACK_INTERACTIONS_PATH}. */
export function slackInteractionRoutes(deps: SlackInteractionDeps): Hono {
  const app = new Hono();
  app.post(
    '/',
    bodyLimit({ maxSize: MAX_INTERACTION_BYTES, onError: (c) => c.json({ error: 'body too large' }, 413) }),
    async (c) => {
      const body = await c.req.text();
      const problem = slackSignatureProblem(
        deps.signingSecret,
        { timestamp: c.req.header('x-slack-request-timestamp'), signature: c.req.header('x-slack-signature') },
        body,
        deps.now(),
      );
      if (problem) {
        deps.logger.warn('slack interaction refused', { status: 401, reason: problem });
        return c.json({ error: 'invalid Slack signature' }, 401);
      }
      return handle(c, body, deps);
    },
  );
  return app;
}

/** A verified request: the Acknowledge click acted on, anything else answered 200 and ignored. */
async function handle(c: Context, body: string, deps: SlackInteractionDeps): Promise<Response> {
  const payload = parsePayload(body);
  if (!payload) {
    deps.logger.error('slack interaction not understood', {
      status: 400,
      reason: 'no JSON payload field of a block_actions interaction',
    });
    return c.json({ error: 'malformed interaction payload' }, 400);
  }
  const action = payload.actions?.find((a) => a.action_id === ACK_ACTION_ID && a.value);
  if (payload.type !== 'block_actions' || !action) return c.body(null, 200);
  const claims = claimsOf(action.value!, payload, deps);
  if (!claims) return c.body(null, 200);
  const by = cleanName(payload.user?.username ?? payload.user?.name ?? payload.user?.id) || 'anonymous';
  try {
    if (claims.set && deps.setJobs)
      return c.body(null, await startSet({ ...claims, set: claims.set }, by, payload, deps));
    await acknowledgeClick(claims, { by, user: payload.user?.id }, deps);
    return c.body(null, 200);
  } catch (err) {
    deps.logger.error('slack acknowledgement failed', { error: err as Error });
    return c.json({ error: 'the acknowledgement store could not be reached; nothing was changed' }, 503);
  }
}

/** The button's verified link token; `undefined` (logged) when it does not verify. */
function claimsOf(
  token: string,
  payload: z.infer<typeof payloadSchema>,
  deps: SlackInteractionDeps,
): AckClaims | undefined {
  try {
    return verifyAckToken(token, deps.links.settings.keys, deps.now());
  } catch (err) {
    if (!(err instanceof AckTokenError)) throw err;
    deps.logger.warn('slack acknowledgement refused', { reason: err.problem, user: payload.user?.id });
    return undefined;
  }
}

/**
 * Acknowledges what the link names (a storm digest's button covers its whole stored set, as the page's
 * form does); the follow-ups go to `defer` when set.
 * @throws the store's error
 */
async function acknowledgeClick(
  claims: AckClaims,
  click: { by: string; user: string | undefined },
  deps: SlackInteractionDeps,
): Promise<void> {
  const scope = await linkScope(
    claims,
    { sets: deps.links.sets, logger: deps.logger },
    Number.POSITIVE_INFINITY,
    deps.now(),
  );
  const result = await acknowledge({ ...claims, fingerprints: scope.fingerprints }, { by: click.by }, deps, {
    defer: deps.defer,
  });
  deps.logger.info('slack acknowledgement', {
    user: click.user,
    by: click.by,
    outcomes: result.alerts.map((a) => a.outcome),
  });
}

/**
 * "Acknowledge all N" of a storm digest: the decision recorded and the set's steps dispatched before the
 * answer, nothing else, whatever the set's size; a second click finds the decision and changes nothing.
 * @returns the status to answer (200)
 */
async function startSet(
  claims: AckClaims & { set: NonNullable<AckClaims['set']> },
  by: string,
  payload: z.infer<typeof payloadSchema>,
  deps: SlackInteractionDeps,
): Promise<200> {
  const { job, started } = await startSetAcknowledgement(claims, { by }, deps.setJobs!.deps());
  deps.logger.info('slack alert set acknowledgement', {
    user: payload.user?.id,
    by,
    set: job.id,
    alerts: job.total,
    ...(started ? { started: true } : { decidedBy: job.by, decidedAt: job.at }),
  });
  return 200;
}

/** The JSON of the form field `payload`; `undefined` when absent or not an interaction. */
function parsePayload(body: string): z.infer<typeof payloadSchema> | undefined {
  const raw = new URLSearchParams(body).get('payload');
  if (raw === null) return undefined;
  try {
    const parsed = payloadSchema.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
