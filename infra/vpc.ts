/**
 * The functions in a VPC of the user's (context `vpcId`, `vpcSubnetIds`, …; `context.ts`), so they reach a
 * Prometheus, Alertmanager or Grafana on private addresses. Every function gets a `VpcConfig` with the
 * given subnets and security groups (or one made here: all outbound, nothing inbound), and the network
 * interface rights Lambda needs, inline on its role like the rest of its IAM (not the managed
 * `AWSLambdaVPCAccessExecutionRole`). AWS services are reached through endpoints instead of the internet:
 * DynamoDB through a gateway endpoint on the given route tables (free), and — with
 * `vpcInterfaceEndpoints=true` — Secrets Manager, SNS and EventBridge Scheduler (and AMP's query API when
 * a workspace is given) through interface endpoints with private DNS. Slack, Feishu and PagerDuty are on
 * the internet: the subnets need a NAT route for them (docs/deploy-aws.md).
 * @see https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc.html
 * @see https://docs.aws.amazon.com/vpc/latest/privatelink/gateway-endpoints.html
 */
import { Validations } from 'aws-cdk-lib';
import {
  CfnVPCEndpoint,
  GatewayVpcEndpointAwsService,
  InterfaceVpcEndpointAwsService,
  Peer,
  Port,
  SecurityGroup,
  Subnet,
  Vpc,
  type ISecurityGroup,
  type ISubnet,
  type IVpc,
} from 'aws-cdk-lib/aws-ec2';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { VpcContext } from './context.js';

/**
 * What Lambda does with a function's role to attach it to the subnets: the actions of
 * `AWSLambdaVPCAccessExecutionRole`. Describe actions support no resource-level permissions, and Lambda
 * creates and deletes the interfaces on the function's behalf, so the resource is `*`.
 * @see https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc.html#configuration-vpc-permissions
 */
export const ENI_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
];

/** The interface endpoints `vpcInterfaceEndpoints=true` makes: every AWS API the functions call besides DynamoDB. */
const INTERFACE_SERVICES = {
  SecretsManager: InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
  Sns: InterfaceVpcEndpointAwsService.SNS,
  Scheduler: new InterfaceVpcEndpointAwsService('scheduler'),
};

export class PrivateNetwork extends Construct {
  readonly vpc: IVpc;
  readonly subnets: ISubnet[];
  readonly securityGroups: ISecurityGroup[];
  readonly #settings: VpcContext;
  #endpointGroup?: SecurityGroup;

  constructor(scope: Construct, id: string, settings: VpcContext) {
    super(scope, id);
    this.#settings = settings;
    // Imported, not looked up: `cdk synth` stays offline and needs no account.
    this.vpc = Vpc.fromVpcAttributes(this, 'Vpc', {
      vpcId: settings.vpcId,
      availabilityZones: settings.subnetIds.map((_, i) => `az-${i}`),
      privateSubnetIds: settings.subnetIds,
    });
    this.subnets = settings.subnetIds.map((subnetId) => Subnet.fromSubnetId(this, subnetId, subnetId));
    this.securityGroups = settings.securityGroupIds
      ? settings.securityGroupIds.map((sg) => SecurityGroup.fromSecurityGroupId(this, sg, sg, { mutable: false }))
      : [
          new SecurityGroup(this, 'FunctionSecurityGroup', {
            vpc: this.vpc,
            description:
              'llm-alert-pipeline functions: outbound to Prometheus, Alertmanager, AWS APIs and chat platforms',
            allowAllOutbound: true,
          }),
        ];
    if (settings.routeTableIds)
      new CfnVPCEndpoint(this, 'DynamoDbEndpoint', {
        vpcId: settings.vpcId,
        serviceName: GatewayVpcEndpointAwsService.DYNAMODB.name,
        vpcEndpointType: 'Gateway',
        routeTableIds: settings.routeTableIds,
      });
    if (settings.interfaceEndpoints)
      for (const [name, service] of Object.entries(INTERFACE_SERVICES)) this.addInterfaceEndpoint(name, service.name);
  }

  /** Lambda's `vpc`, `vpcSubnets` and `securityGroups` props for a function in this network. */
  get functionProps() {
    return { vpc: this.vpc, vpcSubnets: { subnets: this.subnets }, securityGroups: this.securityGroups };
  }

  /** Allows {@link ENI_ACTIONS} on `fn`'s role, inline. */
  allowInterfaces(fn: LambdaFunction): void {
    fn.addToRolePolicy(new PolicyStatement({ actions: ENI_ACTIONS, resources: ['*'] }));
    Validations.of(fn.role!).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        "Lambda's network interfaces in the VPC: ec2:Describe* support no resource-level permissions and Lambda names the interfaces it creates and deletes; the actions are exactly AWSLambdaVPCAccessExecutionRole's.",
    });
  }

  /**
   * An interface endpoint with private DNS in the subnets, open on 443 to the functions' security groups,
   * when `vpcInterfaceEndpoints=true` (e.g. AMP's query API, `aps-workspaces`). No-op otherwise.
   */
  addInterfaceEndpoint(id: string, serviceName: string): void {
    if (!this.#settings.interfaceEndpoints) return;
    this.#endpointGroup ??= this.#makeEndpointGroup();
    new CfnVPCEndpoint(this, `${id}Endpoint`, {
      vpcId: this.#settings.vpcId,
      serviceName,
      vpcEndpointType: 'Interface',
      subnetIds: this.#settings.subnetIds,
      securityGroupIds: [this.#endpointGroup.securityGroupId],
      privateDnsEnabled: true,
    });
  }

  #makeEndpointGroup(): SecurityGroup {
    const group = new SecurityGroup(this, 'EndpointSecurityGroup', {
      vpc: this.vpc,
      description: 'llm-alert-pipeline interface endpoints: HTTPS from the functions',
      allowAllOutbound: false,
    });
    for (const source of this.securityGroups)
      group.addIngressRule(Peer.securityGroupId(source.securityGroupId), Port.tcp(443), 'HTTPS from the functions');
    return group;
  }
}
