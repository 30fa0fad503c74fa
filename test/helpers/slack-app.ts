/**
 * The Slack app with interactivity, as the tests on dynalite drive it through the real app
 * (`loadConfig` → `createDeps` → `createApp`): its settings against the loopback Web API
 * (`slack-api.ts`), the webhook as Alertmanager posts it, and a click on a message's Acknowledge button
 * as Slack posts it to `/v1/slack/interactions` (form-encoded `payload`, signed with the signing secret).
 * @see https://api.slack.com/authentication/verifying-requests-from-slack
 */
import { slackSignature } from '../../shared/channels/slack/signature.js';
import { Secret } from '../../shared/core/secret.js';
import type { SlackCall } from './slack-api.js';

export const WEBHOOK_TOKEN = 'test-token-0123456789abcdef';
export const SIGNING_SECRET = 'slack-signing-secret-0123456789';

/** What the helpers need of the app: Hono's `app.request`. */
interface App {
  request(path: string, init?: RequestInit): Response | Promise<Response>;
}

/**
 * The Slack app's settings with interactivity and acknowledgement links, and the webhook token.
 * @param tableName the dynalite table
 * @param apiUrl the fake Web API's `SLACK_API_URL`
 * @param botToken `SLACK_BOT_TOKEN` (each suite its own, to tell its calls apart)
 */
export function slackAppSettings(tableName: string, apiUrl: string, botToken: string): Record<string, string> {
  return {
    WEBHOOK_TOKEN,
    PUBLIC_URL: 'https://alerts.example.com',
    ACK_SECRET: 'ack-secret-for-tests-0123456789abcdef',
    TABLE_NAME: tableName,
    SLACK_BOT_TOKEN: botToken,
    SLACK_CHANNEL: 'C0ALERTS01',
    SLACK_SIGNING_SECRET: SIGNING_SECRET,
    SLACK_API_URL: apiUrl,
  };
}

/** Posts `body` (JSON) to the webhook with the bearer token, as Alertmanager does. */
export function postWebhook(app: App, body: unknown): Promise<Response> {
  return Promise.resolve(
    app.request('/v1/alertmanager', {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
    }),
  );
}

/** The token of a Slack message's Acknowledge button (its `actions` block). */
export function acknowledgeToken(message: SlackCall): string {
  const actions = message.blocks.find((b) => b.type === 'actions') as unknown as {
    elements: { action_id: string; value?: string }[];
  };
  return actions.elements.find((e) => e.action_id === 'acknowledge')!.value!;
}

/** The form body Slack posts when `user` clicks Acknowledge on a message whose button carries `token`. */
export function clickBody(token: string, user = 'alice'): string {
  const payload = {
    type: 'block_actions',
    user: { id: `U0${user.toUpperCase()}`, username: user, name: user },
    actions: [{ action_id: 'acknowledge', block_id: 'b', value: token, type: 'button' }],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}

/** Slack's signature headers for `body` sent at `timestampSeconds` (epoch seconds), signed with `secret`. */
export function signatureHeaders(body: string, timestampSeconds: number, secret = SIGNING_SECRET) {
  return {
    'x-slack-request-timestamp': String(timestampSeconds),
    'x-slack-signature': slackSignature(new Secret(secret), String(timestampSeconds), body),
  };
}

/**
 * Posts a click to `/v1/slack/interactions` as Slack does.
 * @param headers the signature headers for the body (default: signed now with {@link SIGNING_SECRET})
 */
export function postClick(
  app: App,
  body: string,
  headers: Record<string, string> = signatureHeaders(body, Math.floor(Date.now() / 1000)),
): Promise<Response> {
  return Promise.resolve(
    app.request('/v1/slack/interactions', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    }),
  );
}
