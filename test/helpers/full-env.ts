/**
 * Environments that set every setting to a valid value other than its default, for tests that pin the
 * settings contract (`test/unit/runtime/config-contract.test.ts`) and what the environment's channels send
 * (`test/integration/channels/env-channels.test.ts`). URLs of channels point at 127.0.0.1 port 9; a test
 * that sends replaces {@link LOOPBACK} with its own server's URL.
 */

/** The stand-in for a loopback server's `http://127.0.0.1:PORT`. */
export const LOOPBACK = 'http://127.0.0.1:9';

const ACK_SECRET = 'ack-secret-for-tests-0123456789abcdef';

/** Every setting, with the Slack incoming webhook as the channel named `slack`. */
export const FULL_ENV: Record<string, string> = {
  PORT: '9090',
  WEBHOOK_TOKEN: 'webhook-token-0123456789',
  WEBHOOK_TOKEN_PREVIOUS: 'webhook-token-previous-0123456789',
  ALLOW_UNAUTHENTICATED: 'true',
  HEARTBEAT_ALERTNAME: 'DeadMansSwitch',
  HEARTBEAT_TIMEOUT_SECONDS: '900',
  PROMETHEUS_URL: 'http://prometheus.example.com:9090/prom/',
  SLACK_WEBHOOK_URL: `${LOOPBACK}/slack/T000/B000/xyz`,
  SLACK_SIGNING_SECRET: 'slack-signing-secret-0123456789',
  SLACK_API_URL: `${LOOPBACK}/api`,
  FEISHU_WEBHOOK_URL: `${LOOPBACK}/feishu/open-apis/bot/v2/hook/abc`,
  FEISHU_SECRET: 'feishu-sign-secret',
  // The Feishu app, for the routing file's feishu-app instance (the channel named feishu is the webhook here).
  FEISHU_APP_ID: 'cli_a5fb0ae6a4fake01',
  FEISHU_APP_SECRET: 'feishu-app-secret-0123456789abcdef',
  FEISHU_API_URL: `${LOOPBACK}/open-apis`,
  FEISHU_ENCRYPT_KEY: 'encrypt-key-0123456789abcdef',
  FEISHU_VERIFICATION_TOKEN: 'verification-token-01',
  DINGTALK_WEBHOOK_URL: `${LOOPBACK}/dingtalk/robot/send?access_token=0f1e2d3c4b5a6978`,
  DINGTALK_SECRET: 'SECdingtalk-sign-secret-0123456789',
  DINGTALK_KEYWORD: '告警',
  WECOM_WEBHOOK_URL: `${LOOPBACK}/wecom/cgi-bin/webhook/send?key=693a91f6-7a1b-4bc4-97a0-0ec2e1a5a111`,
  SNS_TOPIC_ARN: 'arn:aws:sns:eu-west-1:123456789012:llm-alerts',
  PAGERDUTY_ROUTING_KEY: 'R0UT1NGKEY0123456789abcdefABCDEF',
  PAGERDUTY_EVENTS_URL: `${LOOPBACK}/pagerduty/v2/enqueue`,
  PUBLIC_URL: 'https://alerts.example.com/pipeline/',
  ACK_SECRET,
  ALERTMANAGER_URL: 'http://alertmanager.example.com:9093',
  GRAFANA_URL: 'https://grafana.example.com/d/llm-alert-pipeline?orgId=2',
  ACK_SECRET_PREVIOUS: 'ack-secret-previous-0123456789abcdef',
  ACK_SECRET_PREVIOUS_UNTIL: '2026-12-01T08:00:00+08:00',
  ACK_TOKEN_TTL_SECONDS: '86400',
  ESCALATION_DELAY_SECONDS: '90.5',
  ESCALATION_SNS_TOPIC_ARN: 'arn:aws:sns:us-east-1:123456789012:escalations',
  ESCALATION_SLACK_WEBHOOK_URL: `${LOOPBACK}/slack/T000/B000/escalation`,
  ESCALATION_SCHEDULE_GROUP: 'llm-alert-escalations',
  ESCALATION_FUNCTION_ARN: 'arn:aws:lambda:eu-west-1:123456789012:function:escalation-check',
  ESCALATION_ROLE_ARN: 'arn:aws:iam::123456789012:role/escalation-scheduler',
  ESCALATION_DEAD_LETTER_QUEUE_ARN: 'arn:aws:sqs:eu-west-1:123456789012:escalation-dlq',
  TABLE_NAME: 'llm-alert-dedupe',
  LOG_LEVEL: 'debug',
  ENRICHMENT_TIMEOUT_MS: '3000',
  MEMORY_TREND_WINDOW_HOURS: '12',
  GPU_MEMORY_CAPACITY_MIB: '81920',
  MEMORY_SERIES: 'process_resident_memory_bytes',
  MEMORY_SERIES_UNIT: 'KiB',
  PROMETHEUS_QUERY_TIMEOUT_MS: '1500',
  DEDUPE_TTL_SECONDS: '604800',
  DEDUPE_LEASE_MS: '90000',
  DELIVERY_TIMEOUT_MS: '4000',
  DELIVERY_RETRIES: '3',
  // Secrets the routing file names.
  PLATFORM_SLACK_URL: `${LOOPBACK}/slack/T000/B000/platform`,
  QWEN_FEISHU_URL: `${LOOPBACK}/feishu/open-apis/bot/v2/hook/qwen`,
  QWEN_FEISHU_SIGNING_SECRET: 'qwen-sign-secret',
  GPU_PAGERDUTY_KEY: 'GPUPAGERKEY0123456789abcdefABCDE',
  ML_SLACK_BOT_TOKEN: 'xoxb-3333-4444-MLbottoken',
  OPS_DINGTALK_URL: `${LOOPBACK}/dingtalk/robot/send?access_token=ops0f1e2d3c4b5a`,
  OPS_WECOM_URL: `${LOOPBACK}/wecom/cgi-bin/webhook/send?key=0ec2e1a5-7a1b-4bc4-97a0-693a91f6a222`,
};

/**
 * Every setting, with the apps as the channels: the Slack app (`SLACK_BOT_TOKEN` + `SLACK_CHANNEL`) named
 * `slack`, the Feishu app (`FEISHU_CHAT_ID`) named `feishu`.
 */
export const SLACK_APP_ENV: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(FULL_ENV).filter(
      ([name]) => !['SLACK_WEBHOOK_URL', 'FEISHU_WEBHOOK_URL', 'FEISHU_SECRET'].includes(name),
    ),
  ),
  SLACK_BOT_TOKEN: 'xoxb-1111-2222-ENVbottoken',
  SLACK_CHANNEL: '#llm-alerts',
  FEISHU_CHAT_ID: 'oc_5ad11d72b830411d72b836c2',
};

/** The chat of the routing file's feishu-app instance. */
export const ROUTING_FEISHU_CHAT = 'oc_0a1b2c3d4e5f60718293a4b5';

/** A routing file with an instance of every channel type, routes naming the environment's channels too. */
export const ROUTING_FILE_TEXT = `channels:
  platform: { type: slack, webhookUrl: { secret: PLATFORM_SLACK_URL }, digestAbove: 5 }
  ml-app: { type: slack-app, channel: C0MLTEAM01, botToken: { secret: ML_SLACK_BOT_TOKEN }, locale: zh-CN }
  qwen: { type: feishu, webhookUrl: { secret: QWEN_FEISHU_URL }, signingSecret: { secret: QWEN_FEISHU_SIGNING_SECRET } }
  pager: { type: sns, topicArn: 'arn:aws:sns:us-west-2:123456789012:pager', messageStructure: json }
  stack-topic: { type: sns }
  stdout: { type: console }
  gpu-pager: { type: pagerduty, routingKey: { secret: GPU_PAGERDUTY_KEY } }
  ops-ding: { type: dingtalk, webhookUrl: { secret: OPS_DINGTALK_URL }, keyword: 值班, mention: ['mobile:13800001111', 'dingtalk:manager4220'] }
  ops-wecom: { type: wecom, webhookUrl: { secret: OPS_WECOM_URL }, mention: ['wecom:zhangsan'] }
  qwen-app: { type: feishu-app, chatId: oc_0a1b2c3d4e5f60718293a4b5, mention: ['ou_7d8a6e6df7621556ce0d21922b676706ccs'], urgent: app }
routes:
  - matchers: ['model_name=~"qwen3-.*"']
    channels: [qwen, feishu]
    continue: true
  - matchers: ['severity="critical"']
    channels: [pager, pagerduty, gpu-pager, sns, slack]
default: { channels: [platform, ml-app, stack-topic, stdout, qwen-app, ops-ding, ops-wecom] }
flapping: { window: 20m }
`;
