/**
 * Every way the product reads an alert's free text (label names and values, annotations, the rule
 * expression in `generatorURL`, `externalURL`, `receiver`, `groupKey`): parsing, classification, the
 * chart, the enrichers' queries, cutting, every channel's rendering, the acknowledgement page, the
 * logs, AMP's two bodies, heartbeats. Each path takes a webhook message whose every field carries
 * the same text, so one adversarial text reaches every pattern on the path at once.
 */
import { webhookSchema, type Alert, type WebhookMessage } from '../../shared/alertmanager/schema.js';
import { alertSection } from '../../shared/ack/page-alert.js';
import { labelSetFingerprint } from '../../shared/alertmanager/fingerprint.js';
import { silenceUrl } from '../../shared/alertmanager/silence-link.js';
import { convertAmpMessage } from '../../shared/amp/convert.js';
import { chartSpec } from '../../shared/chart/spec.js';
import { renderFeishu } from '../../shared/channels/feishu/index.js';
import { renderAppCard } from '../../shared/channels/feishu/app-render.js';
import { renderDingTalk } from '../../shared/channels/dingtalk/index.js';
import { renderWeCom } from '../../shared/channels/wecom/index.js';
import { renderPagerDuty } from '../../shared/channels/pagerduty/render.js';
import { renderSlack } from '../../shared/channels/slack/index.js';
import { renderSns } from '../../shared/channels/sns/message.js';
import { createLogger } from '../../shared/core/logger.js';
import { classifyAlert } from '../../shared/enrich/classify.js';
import { ENRICHERS } from '../../shared/enrich/kinds/index.js';
import type { EnrichedAlert } from '../../shared/enrich/types.js';
import { splitHeartbeats } from '../../shared/heartbeat/receive.js';
import { alertLinks } from '../../shared/render/content.js';
import { buildNotification } from '../../shared/render/notification.js';
import { cutOversized, reduceNotification } from '../../shared/render/reduce.js';
import { renderText } from '../../shared/render/text.js';
import { fakeContext } from '../unit/enrich/fake-context.js';
import { fixture } from './fixtures.js';
import { KV_CACHE_ENRICHMENT, MEMORY_ENRICHMENT } from './notifications.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:alerts';

/**
 * The KV-cache fixture with `text` in every free-text field: each label value but `alertname`'s
 * (and one more label named `text`), each annotation, the rule expression, `externalURL`,
 * `receiver` and `groupKey`.
 */
export function messageWith(text: string): WebhookMessage {
  const m = fixture('firing-kv-cache-critical');
  const a = m.alerts[0]!;
  const labels = Object.fromEntries(Object.keys(a.labels).map((k) => [k, k === 'alertname' ? a.labels[k]! : text]));
  labels[`x${text}`] = text;
  const annotations = Object.fromEntries(Object.keys(a.annotations).map((k) => [k, text]));
  const alert = {
    ...a,
    labels,
    annotations,
    // A lone surrogate cannot be URL-encoded; the URL parser reads one as U+FFFD anyway.
    generatorURL: `http://prometheus:9090/graph?g0.expr=${encodeURIComponent(text.replace(/\p{Cs}/gu, '\ufffd'))}&g0.tab=1`,
    fingerprint: labelSetFingerprint(labels),
  };
  return webhookSchema.parse({
    ...m,
    receiver: text,
    groupKey: text,
    externalURL: `http://alertmanager:9093/${text}`,
    commonLabels: labels,
    commonAnnotations: annotations,
    alerts: [alert],
  });
}

const silent = createLogger('debug', () => {});

/** Alertmanager's `sns.default.message` text of a message (`__text_alert_list` per alert). */
function defaultText(m: WebhookMessage): string {
  const pairs = (r: Record<string, string>) =>
    Object.keys(r)
      .sort()
      .map((k) => ` - ${k} = ${r[k]}\n`)
      .join('');
  const list = (alerts: Alert[]) =>
    alerts
      .map((a) => `Labels:\n${pairs(a.labels)}Annotations:\n${pairs(a.annotations)}Source: ${a.generatorURL}\n`)
      .join('');
  return `${Object.values(m.commonAnnotations).join(' ')}\nAlerts Firing:\n${list(m.alerts)}`;
}

/** The alerts as the pipeline fans them out: cut to the per-field limit, enriched. */
function enriched(m: WebhookMessage): EnrichedAlert[] {
  return m.alerts.map((a, i) => ({
    ...cutOversized(a, silent),
    enrichment: i % 2 ? MEMORY_ENRICHMENT : KV_CACHE_ENRICHMENT,
  }));
}

/** A path: what it is called in a failure, and the call. */
export interface TextPath {
  name: string;
  run(message: WebhookMessage): unknown;
}

export const TEXT_PATHS: TextPath[] = [
  { name: 'webhook schema', run: (m) => webhookSchema.parse(JSON.parse(JSON.stringify(m))) },
  { name: 'classification', run: (m) => m.alerts.map(classifyAlert) },
  { name: 'chart spec', run: (m) => enriched(m).flatMap((a) => [chartSpec(a), chartSpec(a, 'zh-CN')]) },
  {
    name: 'enrichers',
    run: async (m) => {
      // Copies: the enrichers remember their queries per alert, and each run must build them.
      const alerts = m.alerts.map((a) => ({ ...a }));
      const { ctx } = fakeContext(alerts);
      for (const enricher of Object.values(ENRICHERS)) await enricher.enrich(alerts[0]!, ctx).catch(() => undefined);
    },
  },
  { name: 'cut', run: (m) => m.alerts.map((a) => cutOversized(a, silent)) },
  {
    name: 'channels',
    run: (m) => {
      const alerts = enriched(m);
      const n = buildNotification(m, alerts);
      for (const notification of [n, reduceNotification(n)]) {
        renderSlack(notification);
        renderFeishu(notification);
        renderAppCard(notification, { locale: 'en' }, { interactive: true, silence: true });
        renderDingTalk(notification);
        renderWeCom(notification);
        renderSns(notification, TOPIC);
        renderPagerDuty(notification);
        renderText(notification);
      }
      return alerts.map((a) => [alertLinks(a, m.externalURL), silenceUrl(m.externalURL, a.labels)]);
    },
  },
  {
    name: 'acknowledgement page',
    run: (m) =>
      enriched(m).map((a) =>
        alertSection(
          {
            fingerprint: a.fingerprint,
            record: {
              fingerprint: a.fingerprint,
              startsAt: a.startsAt,
              status: 'firing',
              alert: a,
              enrichment: a.enrichment,
              groupKey: m.groupKey,
              externalURL: m.externalURL,
              channels: ['slack'],
              notifiedAt: a.startsAt,
            },
          },
          Date.parse(a.startsAt) + 60_000,
          'https://grafana.example.com',
        ),
      ),
  },
  {
    name: 'logs',
    run: (m) => {
      const log = createLogger('debug', () => {});
      log.info('group received', { groupKey: m.groupKey, receiver: m.receiver, alerts: m.alerts });
      log.error('channel failed', { error: new Error(m.receiver), labels: m.commonLabels });
    },
  },
  {
    name: 'AMP JSON body',
    run: (m) =>
      convertAmpMessage({
        messageId: 'm-1',
        topicArn: TOPIC,
        publishedAt: '2026-11-29T12:43:05.512Z',
        body: JSON.stringify(m),
        attributes: {},
      }),
  },
  {
    name: 'AMP default text',
    run: (m) =>
      convertAmpMessage({
        messageId: 'm-1',
        topicArn: TOPIC,
        publishedAt: '2026-11-29T12:43:05.512Z',
        subject: `[FIRING:${m.alerts.length}] ${m.receiver}`,
        body: defaultText(m),
        attributes: {},
      }),
  },
  { name: 'heartbeats', run: (m) => splitHeartbeats(m, m.receiver) },
];
