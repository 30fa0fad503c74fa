/**
 * The stack as `cdk synth` and `cdk deploy` build it: every setting read from the app's context
 * (`cdk.json` "context" or `-c key=value`) and checked by `context.ts`. `infra/app.ts` calls it on the
 * CLI's app; the tests call it on an app of their own with the documented context values, so what they
 * synthesize is what a user's command line synthesizes.
 */
import type { Construct } from 'constructs';
import {
  alarmEmailFromContext,
  ampFromContext,
  ampWorkspaceFromContext,
  ContextError,
  escalationFromContext,
  refuseUnknownContextKeys,
  routingFileFromContext,
  settingsFromContext,
  vpcFromContext,
} from './context.js';
import { describeRoutingFile } from '../shared/routing/load.js';
import { ConfigError, loadConfig, SETTING_NAMES } from '../shared/runtime/config.js';
import { SECRET_SETTINGS } from '../shared/runtime/settings-secret.js';
import { plainEnvironment, type PlainSettings } from './receiver.js';
import { regionProblem } from './regions.js';
import { LlmAlertPipelineStack } from './stack.js';

/** The stack's name in the cloud assembly (`LlmAlertPipeline.template.json`) and in CloudFormation. */
export const STACK_NAME = 'LlmAlertPipeline';

/**
 * Where `cdk deploy` will put the (environment-agnostic) stack, when known at synth: the CDK CLI sets
 * `CDK_DEFAULT_REGION` and `CDK_DEFAULT_ACCOUNT` from the profile it deploys with.
 */
export interface DeployTarget {
  region?: string;
  account?: string;
}

/** Thrown when the target region cannot take the stack (no function URLs there). */
export class RegionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegionError';
  }
}

/**
 * Adds the pipeline's stack to `scope` (the app, or a stage of it), configured from the context there.
 * @param target where it will be deployed, when known (checked: region, and an `ampTopicArn`'s account and region)
 * @throws ContextError naming the context key of a bad value; RoutingError for a bad routing file; RegionError
 */
export function definePipeline(scope: Construct, target: DeployTarget = {}): LlmAlertPipelineStack {
  const context = (key: string) => scope.node.tryGetContext(key);
  const problem = regionProblem(target.region);
  if (problem) throw new RegionError(problem);
  refuseUnknownContextKeys(Object.keys(scope.node.getAllContext()));
  const settings = settingsFromContext(context);
  const escalation = escalationFromContext(context);
  // The functions refuse escalation without acknowledgement links (nobody could stop one): name the key at synth.
  if (escalation && !settings.publicUrl)
    throw new ContextError(
      'publicUrl',
      'escalation (escalationDelaySeconds) needs it, and ACK_SECRET in the settings secret: without acknowledgement ' +
        'links every critical alert would escalate',
    );
  const ampWorkspaceArn = ampWorkspaceFromContext(context);
  refuseSettingsStartUpRefuses(settings, ampWorkspaceArn);
  const routingFile = routingFileFromContext(context);
  if (routingFile) refuseSecretsNamedLikeSettings(routingFile);
  if (escalation?.channels) refuseUnknownEscalationChannels(escalation.channels, routingFile);
  return new LlmAlertPipelineStack(scope, STACK_NAME, {
    description: 'llm-alert-pipeline: Alertmanager webhook receiver for vLLM fleets',
    settings,
    routingFile,
    escalation,
    alarmEmail: alarmEmailFromContext(context),
    amp: ampFromContext(context, target),
    ampWorkspaceArn,
    vpc: vpcFromContext(context),
  });
}

/**
 * `escalationChannels` names channel instances of the routing file the stack ships (both functions build
 * them from it): checked here, so a typo fails `cdk synth`, not every cold start.
 * @throws ContextError naming the key; RoutingError for a bad routing file
 */
function refuseUnknownEscalationChannels(names: string[], routingFile: string | undefined): void {
  if (!routingFile)
    throw new ContextError('escalationChannels', 'names channel instances of the routing file: give routingFile too');
  const known = describeRoutingFile(routingFile).channelNames;
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length)
    throw new ContextError(
      'escalationChannels',
      `no channel instance named ${unknown.map((n) => `"${n}"`).join(', ')} in ${routingFile} (known: ${known.join(', ')})`,
    );
}

/**
 * The settings of context `settings` are checked alone when read; here with the others the functions get, by
 * start-up's own rules across settings (`PROMETHEUS_SIGV4_REGION` without `PROMETHEUS_URL`,
 * `PROMETHEUS_QUERY_TIMEOUT_MS` over `ENRICHMENT_TIMEOUT_MS`, …): what would stop both functions at cold start
 * stops `cdk synth` instead. Only problems naming a setting given there are reported (the secrets are not known
 * at synth).
 * @throws ContextError naming `settings` and each problem
 */
function refuseSettingsStartUpRefuses(settings: PlainSettings, ampWorkspaceArn: string | undefined): void {
  const given = Object.keys(settings.other ?? {});
  if (!given.length) return;
  const signing = given.filter((name) => name.endsWith('_SIGV4_REGION'));
  if (ampWorkspaceArn && signing.length)
    throw new ContextError(
      'settings',
      `${signing.join(', ')}: ampWorkspaceArn sets it to the workspace's region`,
      false,
    );
  // What the stack sets that those rules read: ampWorkspaceArn's query endpoint.
  const env = {
    ...plainEnvironment(settings),
    ...(ampWorkspaceArn && { PROMETHEUS_URL: 'https://aps-workspaces.invalid' }),
  };
  try {
    loadConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const ours = err.problems.filter((problem) => given.some((name) => problem.startsWith(`${name}:`)));
    if (ours.length) throw new ContextError('settings', ours.join('; '), false);
  }
}

/**
 * A routing file's secret reference names a key of the settings secret; one named like a plain setting of the
 * functions (`{ secret: MEMORY_SERIES }`) would take its value from that setting, which context `settings` puts in
 * the template in the clear.
 * @throws ContextError naming the references
 */
function refuseSecretsNamedLikeSettings(routingFile: string): void {
  const plain = describeRoutingFile(routingFile).secretNames.filter(
    (name) => SETTING_NAMES.includes(name) && !SECRET_SETTINGS.includes(name),
  );
  if (plain.length)
    throw new ContextError(
      'routingFile',
      `${routingFile}: { secret: ${plain.join(' }, { secret: ')} } names a plain setting of the functions, not a ` +
        'secret: give the secret a name of its own',
      false,
    );
}
