/**
 * The HTTP app, built once and served by thin adapters (`hono/aws-lambda` in Lambda,
 * `@hono/node-server` for `npm start`). Tests call `app.request()` directly.
 *
 * Routes (public contract; a trailing slash is ignored on each, as receiver URLs are often written with one):
 * - `POST /v1/alertmanager` — Alertmanager webhook, payload version 4, or Grafana's webhook contact point (version 1);
 * - `GET /healthz` — liveness;
 * - `GET /metrics` — the pipeline's own metrics, Prometheus text format (`npm start`; same token as the webhook);
 * - `GET|POST /v1/ack/:token` — the acknowledgement page (only when `PUBLIC_URL` and `ACK_SECRET` are set);
 * - `GET /v1/chart/:token.png` — an alert's chart, signed and expiring (only when `PUBLIC_URL`, `ACK_SECRET` and `PROMETHEUS_URL` are set);
 * - `GET /v1/alerts/:fingerprint` — an alert's state and history (same bearer token as the webhook);
 * - `POST /v1/slack/interactions` — the Slack app's interactivity request URL, signed by Slack (only when
 *   `SLACK_SIGNING_SECRET`, `PUBLIC_URL` and `ACK_SECRET` are set);
 * - `POST /v1/feishu/callback` — the Feishu app's callback URL, signed and encrypted by Feishu (only when
 *   `FEISHU_APP_ID`, `PUBLIC_URL` and `ACK_SECRET` are set; every callback is refused until `FEISHU_ENCRYPT_KEY` is).
 */
import { Hono, type Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { carriesOurToken, requireBearer, type TokenSource } from './bearer.js';
import { parseWebhookBody, type WebhookMessage } from '../alertmanager/schema.js';
import { bodyLimitByLength } from './body-limit.js';
import { auditRoutes } from '../ack/audit.js';
import { ACK_PATH } from '../ack/links.js';
import type { AckRouteDeps } from '../ack/routes.js';
import type { ChartRouteDeps } from '../chart/routes.js';
import { CHART_PATH } from '../chart/url.js';
import { FEISHU_CALLBACK_PATH, SLACK_INTERACTIONS_PATH } from '../ack/links.js';
import type { SlackInteractionDeps } from '../ack/slack-interactions.js';
import type { FeishuCallbackDeps } from '../ack/feishu-callback.js';
import { takeHeartbeats, type HeartbeatReceiver } from '../heartbeat/receive.js';
import type { Logger } from '../core/logger.js';
import { noMetrics, type Metrics } from '../metrics/catalogue.js';
import { processGroup, type PipelineDeps } from '../pipeline/index.js';
import { mountLazy } from './lazy-routes.js';
import { redactResponses } from './redact-responses.js';
import type { Secret } from '../core/secret.js';

/**
 * Largest accepted webhook body, bytes. A storm of a few thousand alerts with annotations fits;
 * Lambda Function URLs cap requests at 6 MB, so anything larger could never arrive there anyway.
 * @see https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html
 */
export const MAX_BODY_BYTES = 5 * 1024 * 1024;

/** The webhook's path (also answered with a trailing slash). */
const WEBHOOK_PATH = '/v1/alertmanager';

export interface AppSettings {
  /** Bearer token Alertmanager must send (`http_config.authorization.credentials`). */
  webhookToken?: Secret;
  /** The previous token, still accepted during a rotation (`WEBHOOK_TOKEN_PREVIOUS`). */
  webhookTokenPrevious?: Secret;
  /**
   * Serve requests when no token is configured (`ALLOW_UNAUTHENTICATED=true`, or `npm start` on
   * loopback). Default `false`: without a token every protected route answers 503 (fail closed).
   */
  allowUnauthenticated?: boolean;
}

export interface AppDeps extends PipelineDeps {
  logger: Logger;
  /** The acknowledgement page's dependencies; its routes exist only when set. */
  ackPage?: AckRouteDeps;
  /** The tokens accepted now, when they can change at run time (Lambda re-reads the settings secret); default: the settings'. */
  webhookTokens?: TokenSource;
  /** The `GET /metrics` exposition (Prometheus adapter); unset: no such route. */
  metricsScrape?: () => Promise<{ contentType: string; body: string }>;
  /** The dead-man's switch (`HEARTBEAT_ALERTNAME`): heartbeat alerts are recorded, never sent; unset: off. */
  heartbeat?: HeartbeatReceiver;
  /** The Slack app's interactivity route (`SLACK_SIGNING_SECRET`); unset: no such route. */
  slackInteractions?: SlackInteractionDeps;
  /** The Feishu app's callback route (`FEISHU_APP_ID`); unset: no such route. */
  feishuCallback?: FeishuCallbackDeps;
  /** The chart images' route (`PUBLIC_URL`, `ACK_SECRET` and `PROMETHEUS_URL`); unset: no such route. */
  chartRoutes?: ChartRouteDeps;
}

/** Builds the Hono app. Pure wiring: the pipeline lives in `pipeline.ts`. */
export function createApp(settings: AppSettings, deps: AppDeps): Hono {
  // Not strict: `POST /v1/alertmanager/` is the webhook too. Alertmanager drops a 404 like any 4xx,
  // so a receiver URL written with a trailing slash would otherwise lose every notification.
  const app = new Hono({ strict: false });
  app.use(redactResponses());
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  const fixedTokens = { current: settings.webhookToken, previous: settings.webhookTokenPrevious };
  const metrics = deps.metrics ?? noMetrics;
  const tokens = deps.webhookTokens ?? (() => fixedTokens);
  const { allowUnauthenticated } = settings;
  const auth = requireBearer({ tokens, allowUnauthenticated, logger: deps.logger, metrics });
  const guard: Guard = { metrics, rejected: rejectionLogger(deps.logger), tokens, auth };
  if (deps.metricsScrape) {
    const scrape = deps.metricsScrape;
    app.get('/metrics', auth, async (c) => {
      const { contentType, body } = await scrape();
      return c.body(body, 200, { 'content-type': contentType });
    });
  }
  app.route(WEBHOOK_PATH, webhookRoutes(deps, guard));
  mountClickRoutes(app, deps, auth);
  answerTheRest(app, deps, guard);
  return app;
}

/** What the routes share to admit a request or say why not: metrics, the rejection log, the bearer tokens and check. */
interface Guard {
  metrics: Metrics;
  rejected: ReturnType<typeof rejectionLogger>;
  tokens: NonNullable<AppDeps['webhookTokens']>;
  auth: ReturnType<typeof requireBearer>;
}

/** `POST /v1/alertmanager`: counted, authenticated, size-limited, validated, then one group through the pipeline. */
function webhookRoutes(deps: AppDeps, { metrics, rejected, auth }: Guard): Hono {
  const webhook = new Hono();
  webhook.use(async (c, next) => {
    await next();
    metrics.inc('webhook_requests_total', { code: String(c.res.status) });
  });
  webhook.use(auth);
  webhook.use(
    bodyLimitByLength({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => {
        rejected(c, 413, `body exceeds ${MAX_BODY_BYTES} bytes`);
        return c.json({ error: `body exceeds ${MAX_BODY_BYTES} bytes` }, 413);
      },
    }),
  );
  webhook.post('/', async (c) => {
    const parsed = await parseWebhook(c);
    if ('error' in parsed) {
      rejected(c, 400, parsed.error, { issues: parsed.issues });
      return c.json(parsed, 400);
    }
    metrics.inc('alerts_received_total', {}, parsed.message.alerts.length);
    const { rest, record } = takeHeartbeats(parsed.message, deps.heartbeat);
    const result = rest
      ? await processGroup(rest, deps)
      : { received: parsed.message.alerts.length, notified: 0, duplicates: 0, inFlight: 0, channels: {}, ok: true };
    // Recorded after the rest went out: a heartbeat that cannot be recorded never holds back its group.
    if (!(await recordHeartbeats(record, deps.logger)))
      return c.json({ ...result, ok: false, error: 'heartbeat not recorded: retry later' }, 503);
    if (!rest) return c.json({ ...result, heartbeat: true });
    // 502: a channel failed after its retries; 503: alerts in flight in another delivery. Both make
    // Alertmanager retry (it drops 4xx), and the retry sends only what is still missing.
    const failedChannel = Object.values(result.channels).some((o) => o.status === 'failed');
    return c.json(result, result.ok ? 200 : failedChannel ? 502 : 503);
  });
  return webhook;
}

/**
 * The routes people click (the page, the charts, Slack's buttons, Feishu's cards) and the audit route.
 * The clicked ones load on their first request: a webhook never needs them, and a Lambda's cold init
 * need not compile them (./lazy-routes.ts).
 */
function mountClickRoutes(app: Hono, deps: AppDeps, auth: Guard['auth']): void {
  const { ackPage, chartRoutes, slackInteractions, feishuCallback } = deps;
  if (ackPage) mountLazy(app, ACK_PATH, async () => (await import('./off-webhook.js')).ackRoutes(ackPage));
  // Signed like the acknowledgement links, not behind the bearer token: Slack and browsers fetch it.
  if (chartRoutes) mountLazy(app, CHART_PATH, async () => (await import('./off-webhook.js')).chartRoutes(chartRoutes));
  if (deps.ack) app.route('/v1/alerts', auditRoutes(deps.ack.stores, auth, deps.now));
  // Authenticated by Slack's request signature, not the bearer token (Slack cannot send one).
  if (slackInteractions)
    mountLazy(app, SLACK_INTERACTIONS_PATH, async () =>
      (await import('./off-webhook.js')).slackInteractionRoutes(slackInteractions),
    );
  // Authenticated by Feishu's signature and encryption (`FEISHU_ENCRYPT_KEY`), not the bearer token.
  if (feishuCallback)
    mountLazy(app, FEISHU_CALLBACK_PATH, async () =>
      (await import('./off-webhook.js')).feishuCallbackRoutes(feishuCallback),
    );
}

/** A path of no route (404, logged when it carries our token: a wrong receiver URL) and a request that failed (503). */
function answerTheRest(app: Hono, deps: AppDeps, { metrics, rejected, tokens }: Guard): void {
  app.notFound(async (c) => {
    const error = `no route for ${c.req.method} ${c.req.path}`;
    metrics.inc('unsolicited_requests_total', { reason: 'unknown_path' });
    // A POST with our token to a wrong path is a sender's receiver URL that is wrong (Alertmanager
    // drops the 404); without it, and other methods, are browsers and scanners: noise only.
    if (c.req.method === 'POST' && (await carriesOurToken(c, tokens))) {
      rejected(c, 404, error);
      // Counted with the webhook's answers, so `AlertPipelineWebhookRefused` sees a wrong URL too.
      metrics.inc('webhook_requests_total', { code: '404' });
    }
    return c.json({ error }, 404);
  });
  app.onError((err, c) => {
    if (err instanceof HTTPException) {
      // Rejections are logged (never the token) so a misconfigured Alertmanager shows up here.
      rejected(c, err.status, err.message || rejectionReason(err.status));
      return err.getResponse();
    }
    deps.logger.error('request failed', { method: c.req.method, path: c.req.path, error: err });
    // 5xx so Alertmanager retries (it drops 4xx); nothing was sent if the dedupe store failed.
    return c.json({ error: 'internal error, retry later' }, 503);
  });
}

/**
 * Records a message's heartbeats; a failure (the store unreachable) is logged and answered 503, so
 * Alertmanager retries: the group's other alerts already went out, and the retry does not send them again.
 * @returns whether they were recorded
 */
async function recordHeartbeats(record: () => Promise<void>, logger: Logger): Promise<boolean> {
  try {
    await record();
    return true;
  } catch (error) {
    logger.error('heartbeat not recorded', { error, detail: 'answered 503: Alertmanager retries the message' });
    return false;
  }
}

/**
 * Logs a 4xx answer. For a sender's POST (the webhook, or a wrong path) it is an error: Alertmanager
 * retries only 5xx, so the alerts of a rejected request are lost for good and the same request fails
 * again at every flush. Rejections of the acknowledgement form and of GETs are people's, a warning.
 */
function rejectionLogger(logger: Logger) {
  return (c: Context, status: number, reason: string, fields: Record<string, unknown> = {}) => {
    const fromSender =
      c.req.method === 'POST' &&
      ![ACK_PATH, SLACK_INTERACTIONS_PATH, FEISHU_CALLBACK_PATH].some((path) => c.req.path.startsWith(path));
    logger[fromSender ? 'error' : 'warn']('request rejected', {
      method: c.req.method,
      path: c.req.path,
      status,
      reason,
      ...fields,
    });
  };
}

function rejectionReason(status: number): string {
  if (status === 401) return 'missing or invalid bearer token';
  if (status === 400) return 'malformed Authorization header (expected "Bearer <token>")';
  return `HTTP ${status}`;
}

type ParsedWebhook = { message: WebhookMessage } | { error: string; issues?: { path: string; message: string }[] };

async function parseWebhook(c: Context): Promise<ParsedWebhook> {
  // Read outside the try: a failed read (body limit, dropped connection) is not malformed JSON.
  const text = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return { error: `malformed JSON: ${(err as Error).message}` };
  }
  const result = parseWebhookBody(body);
  if (!result.success) {
    return {
      error: "invalid webhook payload (Alertmanager's version 4 or Grafana's version 1 expected)",
      issues: result.error.issues.map((i) => ({ path: i.path.join('.') || '(root)', message: i.message })),
    };
  }
  return { message: result.data };
}
