/**
 * Where the stack can be deployed. The webhook endpoint is a Lambda function URL, which some regions do
 * not offer: cfn-lint's region data lists `AWS::Lambda::Url` as unsupported in these
 * (`test/infra/regions.test.ts` checks the list against it). `cdk synth` stops when the CLI's target region is one of them;
 * for a template deployed elsewhere the stack carries the same list as a CloudFormation rule, so the
 * deploy fails before creating anything.
 * @see https://docs.aws.amazon.com/lambda/latest/dg/urls-configuration.html
 */
import { Aws, CfnRule, Fn, type Stack } from 'aws-cdk-lib';

export const FUNCTION_URL_UNSUPPORTED_REGIONS = [
  'ap-east-2',
  'ap-south-2',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-6',
  'ap-southeast-7',
  'ca-west-1',
  'cn-northwest-1',
  'eu-central-2',
  'eu-south-2',
  'il-central-1',
  'me-central-1',
  'mx-central-1',
  'us-gov-east-1',
  'us-gov-west-1',
] as const;

/** Why a region cannot take the stack, or `undefined` when it can (or is not known). */
export function regionProblem(region: string | undefined): string | undefined {
  if (!region || !(FUNCTION_URL_UNSUPPORTED_REGIONS as readonly string[]).includes(region)) return undefined;
  return `${region} has no Lambda function URLs, which serve the webhook: deploy to another region (AWS_REGION, or the profile's region); docs/deploy-aws.md lists the regions without them`;
}

/** The deploy-time check of {@link regionProblem}, as a rule of the template. */
export function requireFunctionUrlRegion(stack: Stack): CfnRule {
  return new CfnRule(stack, 'FunctionUrlRegion', {
    assertions: [
      {
        assert: Fn.conditionNot(Fn.conditionContains([...FUNCTION_URL_UNSUPPORTED_REGIONS], Aws.REGION)),
        assertDescription:
          'This region has no Lambda function URLs, which serve the webhook: deploy llm-alert-pipeline to another region (docs/deploy-aws.md).',
      },
    ],
  });
}
