/**
 * Harness for the per-alert isolation tests: the real app, pipeline, ack runtime and DynamoDB
 * adapters on dynalite, with the real Slack, Feishu and SNS channels sending to loopback stand-ins
 * that enforce the platforms' limits (`channels/platforms.ts`).
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { SNSClient } from '@aws-sdk/client-sns';
import { createAckRuntime } from '../../shared/runtime/ack.js';
import { createApp } from '../../shared/http/app.js';
import { testDeps } from '../helpers/pipeline-deps.js';
import { buildChannels } from '../../shared/runtime/channels.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { DynamoDbDedupeStore } from '../../shared/store/dedupe-dynamodb.js';
import type { LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { ensureTable } from '../../shared/store/table.js';
import type { Enrichment } from '../../shared/enrich/types.js';
import { createLogger } from '../../shared/core/logger.js';
import { ACK_SECRET, PUBLIC_URL, WEBHOOK_TOKEN } from './ack-harness.js';
import {
  startFeishuPlatform,
  startSlackPlatform,
  startSnsPlatform,
  type FeishuPlatform,
  type SlackPlatform,
  type SnsPlatform,
} from './channels/platforms.js';

export const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:llm-oncall';
const FEISHU_SECRET = 'feishu-isolation-secret';

export interface Platforms {
  slack: SlackPlatform;
  feishu: FeishuPlatform;
  sns: SnsPlatform;
  snsClient: SNSClient;
  close(): Promise<void>;
}

/** Starts the three stand-ins and an SNS client pointed at the SNS one. */
export async function startPlatforms(): Promise<Platforms> {
  const [slack, feishu, sns] = await Promise.all([
    startSlackPlatform(),
    startFeishuPlatform({ secret: FEISHU_SECRET }),
    startSnsPlatform(),
  ]);
  const snsClient = new SNSClient({
    endpoint: sns.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  return {
    slack,
    feishu,
    sns,
    snsClient,
    close: async () => {
      snsClient.destroy();
      await Promise.all([slack.close(), feishu.close(), sns.close()]);
    },
  };
}

export interface IsolationHarness {
  app: ReturnType<typeof createApp>;
  /** Every log line written, parsed. */
  logs: Record<string, unknown>[];
  webhook(body: unknown): Promise<Response>;
  audit(fingerprint: string): Promise<Response>;
  /** Every `pk` in the table. */
  keys(): Promise<string[]>;
}

let tables = 0;

class RefusingStore extends DynamoDbDedupeStore {
  constructor(
    client: LocalDynamoDb['client'],
    settings: ConstructorParameters<typeof DynamoDbDedupeStore>[1],
    private readonly refused?: string,
  ) {
    super(client, settings);
  }

  override claim(
    alert: Parameters<DynamoDbDedupeStore['claim']>[0],
    channels: string[],
    nowMs: number,
    seen?: Parameters<DynamoDbDedupeStore['claim']>[3],
  ) {
    return super.claim(this.#refusable(alert), channels, nowMs, seen);
  }

  override readMany(alerts: Parameters<DynamoDbDedupeStore['readMany']>[0], nowMs: number) {
    return super.readMany(
      alerts.map((a) => this.#refusable(a)),
      nowMs,
    );
  }

  /** A startsAt that is not a date is kept verbatim in the key: over 2,048 bytes, DynamoDB refuses the item. */
  #refusable<A extends { fingerprint: string; startsAt: string }>(alert: A): A {
    return this.refused && alert.fingerprint === this.refused
      ? { ...alert, startsAt: `${alert.startsAt}${'x'.repeat(2048)}` }
      : alert;
  }
}

/**
 * A fresh table and app over the given platforms.
 * @param options.refuseClaimOf a fingerprint whose dedupe item DynamoDB (dynalite) refuses: its claim is
 *   sent with a key over 2,048 bytes, standing in for any `ValidationException` of one alert's item
 */
export async function isolationHarness(
  db: LocalDynamoDb,
  p: Platforms,
  options: { refuseClaimOf?: string } = {},
): Promise<IsolationHarness> {
  const tableName = `isolation-${process.pid}-${++tables}`;
  await ensureTable(db.client, tableName);
  const config = loadConfig({
    PUBLIC_URL,
    ACK_SECRET,
    WEBHOOK_TOKEN,
    TABLE_NAME: tableName,
    SLACK_WEBHOOK_URL: p.slack.url,
    FEISHU_WEBHOOK_URL: p.feishu.url,
    FEISHU_SECRET,
    SNS_TOPIC_ARN: TOPIC,
    DELIVERY_RETRIES: '0',
    DELIVERY_TIMEOUT_MS: '3000',
  });
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger('debug', (line) => void logs.push(JSON.parse(line) as Record<string, unknown>));
  const channels = buildChannels(config, { sns: p.snsClient });
  const runtime = createAckRuntime(config, { dynamodb: db.client, sns: p.snsClient }, channels, { logger });
  const enrich = async (alerts: { fingerprint: string }[]) =>
    new Map<string, Enrichment>(
      alerts.map((a) => [a.fingerprint, { status: 'unavailable', kind: 'queue', reason: 'test' }]),
    );
  const app = createApp(config, {
    ...testDeps({
      store: new RefusingStore(db.client, { tableName, ttlSeconds: config.dedupeTtlSeconds }, options.refuseClaimOf),
      alerts: runtime.tracker.stores,
      channels,
      enrich,
      delivery: config.delivery,
      logger,
      now: Date.now,
      ack: runtime.tracker,
    }),
    ackPage: runtime.page,
  });
  return {
    app,
    logs,
    webhook: (body) =>
      Promise.resolve(
        app.request('/v1/alertmanager', {
          method: 'POST',
          body: typeof body === 'string' ? body : JSON.stringify(body),
          headers: { 'content-type': 'application/json', authorization: `Bearer ${WEBHOOK_TOKEN}` },
        }),
      ),
    audit: (fingerprint) =>
      Promise.resolve(
        app.request(`/v1/alerts/${encodeURIComponent(fingerprint)}`, {
          headers: { authorization: `Bearer ${WEBHOOK_TOKEN}` },
        }),
      ),
    keys: async () => {
      const out = await db.client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
      return (out.Items ?? []).map((i) => i.pk!.S!).sort();
    },
  };
}
