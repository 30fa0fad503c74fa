/**
 * Test helper: a role's IAM grants in a synthesized template, one readable line per action and
 * resource (`dynamodb:GetItem Table.Arn`), with logical IDs replaced by names the test chooses,
 * so a test can assert the exact set a role holds.
 */
import type { CfnElement, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';

interface Statement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: unknown;
}

/** Logical ID → name, for the constructs a test names (their default child's logical ID). */
export function namesOf(stack: Stack, named: Record<string, IConstruct>): Map<string, string> {
  const byId = new Map<string, string>();
  for (const [name, construct] of Object.entries(named)) {
    byId.set(stack.getLogicalId((construct.node.defaultChild ?? construct) as CfnElement), name);
  }
  return byId;
}

/**
 * Every `Allow` an IAM role holds through `AWS::IAM::Policy` resources and its inline policies,
 * as sorted lines `action resource[ if condition]`.
 * @param roleId the role's logical ID
 */
export function grantsOf(template: Template, roleId: string, names: Map<string, string>): string[] {
  const json = template.toJSON();
  const attached = Object.values(
    json.Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>,
  )
    .filter(
      (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
    )
    .map((r) => r.Properties.PolicyDocument as { Statement: Statement[] });
  const inline = (
    (json.Resources[roleId].Properties.Policies ?? []) as { PolicyDocument: { Statement: Statement[] } }[]
  ).map((p) => p.PolicyDocument);
  const lines: string[] = [];
  for (const statement of [...attached, ...inline].flatMap((d) => d.Statement)) {
    if (statement.Effect !== 'Allow') throw new Error(`unexpected ${statement.Effect} statement`);
    const condition = statement.Condition ? ` if ${show(statement.Condition, names)}` : '';
    for (const action of [statement.Action].flat()) {
      for (const resource of [statement.Resource].flat()) lines.push(`${action} ${show(resource, names)}${condition}`);
    }
  }
  return lines.sort();
}

/** The managed policies a role has attached (ARNs as shown). */
export function managedPoliciesOf(template: Template, roleId: string, names: Map<string, string>): string[] {
  return ((template.toJSON().Resources[roleId].Properties.ManagedPolicyArns ?? []) as unknown[]).map((arn) =>
    show(arn, names),
  );
}

/** Renders a CloudFormation value: `Ref` as the name, `Fn::GetAtt` as `name.Attr`, `Fn::Join` joined. */
export function show(value: unknown, names: Map<string, string>): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if (typeof v.Ref === 'string') return v.Ref.startsWith('AWS::') ? `\${${v.Ref}}` : (names.get(v.Ref) ?? `?${v.Ref}`);
  if (Array.isArray(v['Fn::GetAtt'])) {
    const [id, attr] = v['Fn::GetAtt'] as [string, string];
    return `${names.get(id) ?? `?${id}`}.${attr}`;
  }
  if (Array.isArray(v['Fn::Join'])) {
    const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map((p) => show(p, names)).join(sep);
  }
  if (value && typeof value === 'object') {
    return `{${Object.entries(v)
      .map(([k, x]) => `${k}: ${show(x, names)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}
