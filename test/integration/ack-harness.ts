/**
 * Test harness for the acknowledgement routes: the real app, pipeline, ack runtime (built from a real
 * `loadConfig`) and DynamoDB adapters on dynalite; recording channels; a settable clock; a browser-like
 * client that keeps the page's cookies and submits its form.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { createAckRuntime, type AckClients, type AckRuntime } from '../../shared/runtime/ack.js';
import { createApp } from '../../shared/http/app.js';
import { DeliveryError, type Channel } from '../../shared/channels/channel.js';
import { UNKNOWN_OUTCOME_MESSAGE } from '../../shared/channels/channel.js';
import type { Locale } from '../../shared/core/locale.js';
import { loadConfig, type Config } from '../../shared/runtime/config.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import type { LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { silentLogger } from '../../shared/core/logger.js';
import type { Notification } from '../../shared/render/notification.js';
import type { Alert } from '../../shared/alertmanager/schema.js';
import type { AckRouteDeps } from '../../shared/ack/routes.js';

export const PUBLIC_URL = 'https://ack.example.com';
export const ACK_SECRET = 'ack-secret-for-tests-0123456789abcdef';
export const WEBHOOK_TOKEN = 'test-token-0123456789abcdef';

export class RecordingChannel implements Channel {
  received: Notification[] = [];
  /** The channel's language: its links carry it (`zh-CN`: the page in Chinese). */
  locale?: Locale;
  /** While set, every send fails like an unreachable platform (nothing is received). */
  down = false;
  /**
   * While set, every send is received but its answer never comes in time: the attempt times out after
   * the platform had the whole message (a slow platform; its outcome unknown to the sender).
   */
  slow = false;
  /** Set: the channel counts one event per alert against this rate, as PagerDuty does. */
  eventsPerMinute?: number;
  constructor(readonly name: string) {}
  async send(n: Notification): Promise<void> {
    if (this.down) throw new Error(`${this.name}: platform unreachable (test)`);
    this.received.push(n);
    if (this.slow)
      throw new DeliveryError(`${this.name}: ${UNKNOWN_OUTCOME_MESSAGE}`, {
        retryable: true,
        reason: 'timeout',
        outcomeUnknown: true,
      });
  }
}

export interface AckHarness {
  app: ReturnType<typeof createApp>;
  runtime: AckRuntime;
  config: Config;
  channels: RecordingChannel[];
  tableName: string;
  /** Moves the clock, milliseconds. */
  advance(ms: number): void;
  now(): number;
  /** Every item of the table, sorted by key (a snapshot to compare). */
  scan(): Promise<string>;
  webhook(body: unknown): Promise<Response>;
  audit(fingerprint: string, token?: string): Promise<Response>;
}

let tables = 0;

/** What a test may lay over the harness: the pipeline's enrichment, and the page's extra dependencies. */
export interface HarnessExtras {
  enrich?: (alerts: Alert[]) => Promise<Map<string, Enrichment>>;
  page?: Pick<AckRouteDeps, 'refresh' | 'charts' | 'grafanaUrl'>;
}

/**
 * @param env settings laid over PUBLIC_URL, ACK_SECRET, WEBHOOK_TOKEN and a fresh TABLE_NAME
 * @param clients AWS clients for the ack runtime beyond DynamoDB (an SNS client for an escalation topic)
 */
export async function ackHarness(
  db: LocalDynamoDb,
  env: Record<string, string> = {},
  clients: Omit<AckClients, 'dynamodb'> = {},
  extras: HarnessExtras = {},
): Promise<AckHarness> {
  const tableName = `ack-${process.pid}-${++tables}`;
  await ensureTable(db.client, tableName);
  const config = loadConfig({ PUBLIC_URL, ACK_SECRET, WEBHOOK_TOKEN, TABLE_NAME: tableName, ...env });
  let offset = 0;
  const now = () => Date.now() + offset;
  const channels = [new RecordingChannel('slack'), new RecordingChannel('sns')];
  const runtime = createAckRuntime(config, { dynamodb: db.client, ...clients }, channels, {
    logger: silentLogger,
    now,
  });
  const enrich =
    extras.enrich ??
    (async (alerts: { fingerprint: string }[]) =>
      new Map<string, Enrichment>(
        alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'kv_cache', reason: 'test' }]),
      ));
  const app = createApp(config, {
    ...testDeps({
      table: { client: db.client, tableName },
      alerts: runtime.tracker.stores,
      channels,
      enrich,
      delivery: { timeoutMs: 2000, retries: 0, budgetMs: 5000 },
      now,
      ack: runtime.tracker,
    }),
    ackPage: runtime.page && { ...runtime.page, ...extras.page },
  });
  return {
    app,
    runtime,
    config,
    channels,
    tableName,
    advance: (ms) => void (offset += ms),
    now,
    scan: async () => {
      const out = await db.client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
      const items = (out.Items ?? []).map((i) => JSON.stringify(i)).sort();
      return items.join('\n');
    },
    webhook: async (body) =>
      app.request('/v1/alertmanager', {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
      }),
    audit: async (fingerprint, token = WEBHOOK_TOKEN) =>
      app.request(`/v1/alerts/${fingerprint}`, { headers: token ? { authorization: `Bearer ${token}` } : {} }),
  };
}

/** A browser stand-in: keeps cookies per name, reads the form's hidden fields, posts it same-origin. */
export class FormClient {
  readonly cookies = new Map<string, string>();
  lastHtml = '';
  constructor(
    private readonly app: AckHarness['app'],
    private readonly origin = PUBLIC_URL,
  ) {}

  #cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  #keep(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=') as [string, string];
      this.cookies.set(name.trim(), value.trim());
    }
  }

  /** GET the page (path of the link, e.g. `/v1/ack/<token>`). */
  async open(path: string, headers: Record<string, string> = {}): Promise<Response> {
    const res = await this.app.request(path, { headers: { cookie: this.#cookieHeader(), ...headers } });
    this.#keep(res);
    this.lastHtml = await res.clone().text();
    return res;
  }

  /** The hidden `nonce` and `mac` of the last page. */
  hidden(): { nonce: string; mac: string } {
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(this.lastHtml)?.[1] ?? '';
    return { nonce: field('nonce'), mac: field('mac') };
  }

  /** POSTs the last page's form with `fields` (name, action, hours) and its hidden fields. */
  async submit(
    path: string,
    fields: Record<string, string>,
    overrides: { headers?: Record<string, string>; hidden?: Partial<{ nonce: string; mac: string }> } = {},
  ): Promise<Response> {
    const body = new URLSearchParams({ ...this.hidden(), ...overrides.hidden, action: 'ack', ...fields });
    const res = await this.app.request(path, {
      method: 'POST',
      body: body.toString(),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.origin,
        'sec-fetch-site': 'same-origin',
        cookie: this.#cookieHeader(),
        ...overrides.headers,
      },
    });
    this.#keep(res);
    this.lastHtml = await res.clone().text();
    return res;
  }
}

/** The path of a notification's Acknowledge link. */
export function ackPath(n: Notification | undefined): string {
  if (!n?.acknowledgeUrl) throw new Error('notification has no acknowledgeUrl');
  return new URL(n.acknowledgeUrl).pathname;
}

/**
 * A harness whose critical alerts escalate, an hour after their first message, to a Slack webhook
 * stand-in (`target`), with `env` laid over.
 */
export function escalationHarness(db: LocalDynamoDb, target: { url: string }, env: Record<string, string> = {}) {
  return ackHarness(db, {
    ESCALATION_SLACK_WEBHOOK_URL: `${target.url}/services/T0/B0/escalation`,
    ESCALATION_DELAY_SECONDS: '3600',
    ...env,
  });
}

/** An alert's record and history as the audit route answers them. */
export async function auditOf(h: AckHarness, fingerprint: string) {
  return (await (await h.audit(fingerprint)).json()) as {
    record: { status: string; escalation?: { state: string; reason?: string } };
    history: Record<string, unknown>[];
  };
}
