/**
 * The private-network variants (`-c vpcId=… -c vpcSubnetIds=…`, `docs/deploy-aws.md`), as synthesized:
 * every function in the given subnets with a security group, the network-interface rights inline on its
 * role (no managed policy), the DynamoDB gateway endpoint on the given route tables, and with
 * `vpcInterfaceEndpoints=true` the interface endpoints of every other AWS API the functions call.
 */
import { describe, expect, it } from 'vitest';
import { ENI_ACTIONS } from '../../infra/vpc.js';
import { deployed } from './assembly/deployed.js';
import { VARIANTS } from './assembly/variants.js';

const resourcesOf = (variant: 'vpc' | 'vpcOwnSecurityGroup', type: string) =>
  Object.entries(deployed(variant).template.Resources).filter(([, r]) => r.Type === type);

describe.each(['vpc', 'vpcOwnSecurityGroup'] as const)('the %s variant', (variant) => {
  const subnets = VARIANTS[variant].vpcSubnetIds.split(',');
  const { template } = deployed(variant);

  it('puts every function in the given subnets, with a security group', () => {
    const functions = resourcesOf(variant, 'AWS::Lambda::Function');
    expect(functions.length).toBe(variant === 'vpc' ? 2 : 1);
    for (const [id, fn] of functions) {
      expect(fn.Properties!.VpcConfig.SubnetIds, id).toEqual(subnets);
      const groups = fn.Properties!.VpcConfig.SecurityGroupIds as unknown[];
      if (variant === 'vpcOwnSecurityGroup') expect(groups).toEqual(['sg-0a1b2c3d4e5f60799']);
      else {
        expect(groups).toHaveLength(1);
        const [made] = resourcesOf(variant, 'AWS::EC2::SecurityGroup').filter(([sg]) =>
          sg.includes('FunctionSecurityGroup'),
        );
        expect(groups[0]).toEqual({ 'Fn::GetAtt': [made![0], 'GroupId'] });
        expect(made![1].Properties!.VpcId).toBe(VARIANTS.vpc.vpcId);
        expect(made![1].Properties!.SecurityGroupIngress).toBeUndefined();
      }
    }
  });

  it("allows the network-interface actions inline on each function's role, with no managed policy", () => {
    for (const [id, fn] of resourcesOf(variant, 'AWS::Lambda::Function')) {
      const role = (fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      expect(template.Resources[role]!.Properties!.ManagedPolicyArns, id).toBeUndefined();
      const statements = resourcesOf(variant, 'AWS::IAM::Policy')
        .filter(([, p]) => JSON.stringify(p.Properties!.Roles) === JSON.stringify([{ Ref: role }]))
        .flatMap(
          ([, p]) => p.Properties!.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[],
        );
      const eni = statements.filter((s) => [s.Action].flat().some((a) => a.startsWith('ec2:')));
      expect(
        eni.map((s) => ({ actions: [s.Action].flat().sort(), resource: s.Resource })),
        id,
      ).toEqual([{ actions: [...ENI_ACTIONS].sort(), resource: '*' }]);
    }
  });

  it('reaches DynamoDB through a gateway endpoint on the given route tables', () => {
    const gateways = resourcesOf(variant, 'AWS::EC2::VPCEndpoint').filter(
      ([, e]) => e.Properties!.VpcEndpointType === 'Gateway',
    );
    expect(gateways).toHaveLength(1);
    expect(gateways[0]![1].Properties).toMatchObject({
      VpcId: VARIANTS[variant].vpcId,
      RouteTableIds: VARIANTS[variant].vpcRouteTableIds.split(','),
    });
    expect(JSON.stringify(gateways[0]![1].Properties!.ServiceName)).toContain('.dynamodb');
  });

  it(
    variant === 'vpc'
      ? 'makes interface endpoints for Secrets Manager, SNS and EventBridge Scheduler, open on 443 to the functions'
      : 'makes no interface endpoint without vpcInterfaceEndpoints=true',
    () => {
      const endpoints = resourcesOf(variant, 'AWS::EC2::VPCEndpoint').filter(
        ([, e]) => e.Properties!.VpcEndpointType === 'Interface',
      );
      if (variant !== 'vpc') return expect(endpoints).toEqual([]);
      const services = endpoints.map(
        ([, e]) => JSON.stringify(e.Properties!.ServiceName).match(/\.([a-z-]+)"\]\]\}$/)?.[1],
      );
      expect(services.sort()).toEqual(['scheduler', 'secretsmanager', 'sns']);
      for (const [, e] of endpoints)
        expect(e.Properties).toMatchObject({ SubnetIds: subnets, PrivateDnsEnabled: true });
      const [, group] = resourcesOf(variant, 'AWS::EC2::SecurityGroup').find(([sg]) =>
        sg.includes('EndpointSecurityGroup'),
      )!;
      const [functionGroup] = resourcesOf(variant, 'AWS::EC2::SecurityGroup').find(([sg]) =>
        sg.includes('FunctionSecurityGroup'),
      )!;
      expect(group.Properties!.SecurityGroupIngress).toEqual([
        expect.objectContaining({
          IpProtocol: 'tcp',
          FromPort: 443,
          ToPort: 443,
          SourceSecurityGroupId: { 'Fn::GetAtt': [functionGroup, 'GroupId'] },
        }),
      ]);
    },
  );
});
