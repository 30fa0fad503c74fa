/**
 * The stack variants the documentation describes, as the context a user passes with `-c key=value`.
 * The infra tier synthesizes each once per run (`setup.ts`), the way `cdk synth` does (cdk.json's
 * context, then these values), and the tests read the templates and the assets it wrote.
 */
import { fileURLToPath } from 'node:url';

/** The example routing file the documentation deploys with `-c routingFile=infra/routing.example.yml`. */
const ROUTING_EXAMPLE = fileURLToPath(new URL('../../../infra/routing.example.yml', import.meta.url));
/** A routing file whose PagerDuty instance is an escalation target (`escalationChannels`). */
const ROUTING_ESCALATION = fileURLToPath(new URL('../fixtures/routing-escalation.yml', import.meta.url));

export const VARIANTS = {
  /** `npx cdk deploy` with no context. */
  default: {},
  /** Every plain setting given. */
  settings: {
    prometheusUrl: 'https://prometheus.example.com',
    alertmanagerUrl: 'https://alertmanager.example.com',
    publicUrl: 'https://alerts.example.com',
    grafanaUrl: 'https://grafana.example.com',
    logLevel: 'debug',
    slackChannel: 'C0ALERTS01',
    alarmEmail: 'oncall@example.com',
  },
  /** Escalation of unacknowledged critical alerts (needs acknowledgement links: `publicUrl`). */
  escalation: { publicUrl: 'https://alerts.example.com', escalationDelaySeconds: '900' },
  /**
   * Escalation to a routing-file instance and into the Slack app's threads, with another setting given by
   * context `settings`.
   */
  escalationChannels: {
    publicUrl: 'https://alerts.example.com',
    escalationDelaySeconds: '900',
    routingFile: ROUTING_ESCALATION,
    escalationChannels: 'oncall-pagerduty',
    slackChannel: 'C0ALERTS01',
    settings: '{"TIME_ZONE":"Asia/Shanghai"}',
  },
  /** The shipped example routing file. */
  routing: { routingFile: ROUTING_EXAMPLE },
  /** AMP publishing to a topic the stack creates, for one workspace. */
  ampTopicCreated: {
    ampTopic: 'create',
    ampWorkspaceArn: 'arn:aws:aps:eu-west-1:123456789012:workspace/ws-0123abcd-4567-89ef-0123-456789abcdef',
  },
  /** AMP publishing to a topic the user already has. */
  ampTopicGiven: { ampTopicArn: 'arn:aws:sns:eu-west-1:123456789012:amp-alerts' },
  /** Every function in a private network, with escalation, the DynamoDB gateway and interface endpoints. */
  vpc: {
    vpcId: 'vpc-0a1b2c3d4e5f60718',
    vpcSubnetIds: 'subnet-0a1b2c3d4e5f60711,subnet-0a1b2c3d4e5f60722',
    vpcRouteTableIds: 'rtb-0a1b2c3d4e5f60711,rtb-0a1b2c3d4e5f60722',
    vpcInterfaceEndpoints: 'true',
    publicUrl: 'https://alerts.example.com',
    escalationDelaySeconds: '900',
  },
  /** The same, in the user's own security group, without interface endpoints (a NAT route to the AWS APIs). */
  vpcOwnSecurityGroup: {
    vpcId: 'vpc-0a1b2c3d4e5f60718',
    vpcSubnetIds: 'subnet-0a1b2c3d4e5f60711,subnet-0a1b2c3d4e5f60722',
    vpcSecurityGroupIds: 'sg-0a1b2c3d4e5f60799',
    vpcRouteTableIds: 'rtb-0a1b2c3d4e5f60711',
  },
} satisfies Record<string, Record<string, string>>;

export type VariantName = keyof typeof VARIANTS;
