/**
 * Follow-ups go to the message that announced the alert, whatever group key they arrive under: the
 * real app (`loadConfig` → `createDeps` → `createApp`, dynalite), the Slack app and the Feishu app on
 * their loopback stand-ins. Two alerts are announced in one group; then Alertmanager's grouping changes
 * (a reload with another `group_by`), so the first resolve, the acknowledgement's group and the last
 * resolve come under other group keys. Each lands in the first thread (Slack: `chat.update` of its `ts`
 * and a reply with its `thread_ts`; Feishu: a `PATCH` of its card and a reply to it), and no new
 * top-level message or card is posted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../shared/http/app.js';
import { loadConfig } from '../../shared/runtime/config.js';
import { startLocalDynamoDb, type LocalDynamoDb } from '../../shared/store/local-dynamodb.js';
import { createLogger } from '../../shared/core/logger.js';
import { createDeps } from '../../shared/runtime/deps.js';
import { labelSetFingerprint } from '../../shared/alertmanager/fingerprint.js';
import { startFakeSlackApi, type FakeSlackApi } from '../helpers/slack-api.js';
import { clickBody, postClick, postWebhook, slackAppSettings } from '../helpers/slack-app.js';
import { startFakeFeishuApi, type FakeFeishuApi } from '../helpers/feishu-api.js';

const CHAT = 'oc_threadsfollow0123456789ab';
const APP = { appId: 'cli_threadsfollow01', appSecret: 'feishu-app-secret-0123456789' };

const labels = (instance: string) => ({
  alertname: 'VLLMQueueBacklog',
  severity: 'warning',
  model_name: 'llama-3.1-70b',
  instance,
});
const alertOf = (instance: string, status: 'firing' | 'resolved') => ({
  status,
  labels: labels(instance),
  annotations: { summary: `queue backlog on ${instance}` },
  startsAt: '2026-11-30T12:00:00Z',
  endsAt: status === 'resolved' ? '2026-11-30T12:20:00Z' : '0001-01-01T00:00:00Z',
  generatorURL: 'http://prometheus:9090/graph',
  fingerprint: labelSetFingerprint(labels(instance)),
});
/** A webhook body as Alertmanager sends it for `groupLabels` (its `groupKey` is made from them). */
function message(groupLabels: Record<string, string>, alerts: ReturnType<typeof alertOf>[]) {
  const set = Object.entries(groupLabels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
  return {
    version: '4',
    groupKey: `{}:{${set}}`,
    truncatedAlerts: 0,
    status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved',
    receiver: 'llm-alert-pipeline',
    groupLabels,
    commonLabels: groupLabels,
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    alerts,
  };
}

describe('follow-ups after a routing change go to the thread that announced the alert', () => {
  let db: LocalDynamoDb;
  let slack: FakeSlackApi;
  let feishu: FakeFeishuApi;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    db = await startLocalDynamoDb('threads-follow-alert');
    slack = await startFakeSlackApi();
    feishu = await startFakeFeishuApi({ ...APP, chats: [CHAT] });
    const config = loadConfig({
      ...slackAppSettings(db.tableName, slack.url, 'xoxb-1111-2222-THREADStokenXYZ'),
      FEISHU_APP_ID: APP.appId,
      FEISHU_APP_SECRET: APP.appSecret,
      FEISHU_API_URL: feishu.url,
      FEISHU_CHAT_ID: CHAT,
      DELIVERY_RETRIES: '0',
    });
    app = createApp(
      config,
      createDeps(
        config,
        { dynamodb: db.client },
        createLogger('error', () => undefined),
      ),
    );
  });
  afterAll(async () => {
    await Promise.allSettled([slack?.close(), feishu?.close(), db?.close()]);
  });

  const webhook = async (body: unknown) => expect((await postWebhook(app, body)).status).toBe(200);
  const click = async (token: string) => expect((await postClick(app, clickBody(token))).status).toBe(200);
  const slackCalls = () => slack.calls().map((c) => `${c.method} ${c.form.ts ?? ''}|${c.form.thread_ts ?? ''}`);
  const stateLine = (i: number) =>
    (slack.calls()[i]!.blocks[1] as unknown as { elements: { text: string }[] }).elements[0]!.text;

  it('resolve, acknowledgement and the last resolve, each under a new group key, stay in the first thread', async () => {
    // Announced under group_by [alertname, model_name].
    const byModel = { alertname: 'VLLMQueueBacklog', model_name: 'llama-3.1-70b' };
    await webhook(message(byModel, [alertOf('vllm-0:8000', 'firing'), alertOf('vllm-1:8000', 'firing')]));
    const [first] = slack.calls();
    expect(first!.form.thread_ts).toBeUndefined();
    expect(feishu.messages).toHaveLength(1);
    const button = (
      first!.blocks.find((b) => b.type === 'actions') as unknown as {
        elements: { action_id: string; value?: string }[];
      }
    ).elements.find((e) => e.action_id === 'acknowledge')!;

    // Reloaded with group_by [alertname, instance]: vllm-0 resolves in a group of its own.
    await webhook(
      message({ alertname: 'VLLMQueueBacklog', instance: 'vllm-0:8000' }, [alertOf('vllm-0:8000', 'resolved')]),
    );
    const ts = slack.calls().find((c) => c.method === 'chat.update')?.form.ts ?? '(no chat.update)';
    expect(slackCalls()).toEqual(['chat.postMessage |', `chat.update ${ts}|`, `chat.postMessage |${ts}`]);
    expect(stateLine(1)).toMatch(/^🔥 \*Firing\* \(1 alert\)/);

    // vllm-1, still firing, is acknowledged from the first message's button.
    await click(button.value!);
    expect(slackCalls().slice(3)).toEqual([`chat.update ${ts}|`, `chat.postMessage |${ts}`]);

    // ... and resolves in its own new group: the first message reads Resolved.
    await webhook(
      message({ alertname: 'VLLMQueueBacklog', instance: 'vllm-1:8000' }, [alertOf('vllm-1:8000', 'resolved')]),
    );
    expect(slackCalls().slice(5)).toEqual([`chat.update ${ts}|`, `chat.postMessage |${ts}`]);
    expect(stateLine(5)).toMatch(/^✅ \*Resolved\* at 2026-11-30 12:20:00 UTC/);
    expect(slack.calls().filter((c) => c.method === 'chat.postMessage' && !c.form.thread_ts)).toHaveLength(1);

    // Feishu: one card, patched for each follow-up, every reply to it.
    expect(feishu.messages).toHaveLength(1);
    const [card] = feishu.messages;
    expect(card!.updates.length).toBeGreaterThanOrEqual(3);
    expect(card!.replies).toHaveLength(3);
    expect(JSON.stringify(card!.updates.at(-1))).toMatch(/✅ 已于 2026-11-30 12:20:00 UTC 恢复/);
    expect(feishu.violations).toEqual([]);
  });
});
