/**
 * Ships the routing file to the receiver Lambda: checked at synth time (a bad file fails `cdk synth`
 * with its line and field), copied into the bundle next to `index.mjs`, named by `ROUTING_FILE`, and
 * the function allowed to publish to every SNS topic the file names.
 *
 * The file holds no secret (the schema only accepts `{ secret: NAME }` references), so bundling it
 * puts no secret in the asset or the template; the values live in the settings secret under NAME.
 */
import { resolve } from 'node:path';
import { Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';
import { describeRoutingFile } from '../shared/routing/load.js';

/** Where the file lands in the Lambda (`LAMBDA_TASK_ROOT` is `/var/task`). */
export const LAMBDA_ROUTING_FILE = '/var/task/routing.yml';

/** What the stack needs to know about a routing file. */
export interface RoutingShipment {
  /** Absolute path of the file on the synth machine. */
  source: string;
  /** Bundling hooks that copy it into the asset as `routing.yml`. */
  commandHooks: ICommandHooks;
  /** `sns:Publish` on the topics the file names (none: `undefined`). */
  publish?: PolicyStatement;
  /** Settings the file references as secrets: keys to put in the settings secret. */
  secretNames: string[];
  /** Whether an SNS instance uses the stack's own topic (`SNS_TOPIC_ARN`). */
  usesDefaultTopic: boolean;
  /** Each SNS instance's `topicArn`, `undefined` for one on the stack's own topic. */
  snsTopics: Record<string, string | undefined>;
}

/**
 * Checks a routing file and prepares its shipment.
 * @param path relative to the working directory of `cdk synth`, or absolute
 * @throws RoutingError naming the line and field of each problem
 */
export function shipRoutingFile(path: string): RoutingShipment {
  const source = resolve(path);
  const described = describeRoutingFile(source);
  return {
    source,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (_inputDir, outputDir) => [`cp ${shellQuote(source)} ${shellQuote(`${outputDir}/routing.yml`)}`],
    },
    publish: described.topicArns.length
      ? new PolicyStatement({ effect: Effect.ALLOW, actions: ['sns:Publish'], resources: described.topicArns })
      : undefined,
    secretNames: described.secretNames,
    usesDefaultTopic: described.usesDefaultTopic,
    snsTopics: described.snsTopics,
  };
}

/**
 * The SNS topics the instances `names` of a shipped routing file publish to: what the escalation function, which
 * sends only to the instances `escalationChannels` names (and to threads, never SNS), may publish to.
 * @returns `arns` the instances' own topics; `alertTopic` whether one publishes to the stack's own
 */
export function namedSnsTopics(
  routing: RoutingShipment,
  names: readonly string[],
): { arns: string[]; alertTopic: boolean } {
  const named = names.filter((name) => name in routing.snsTopics).map((name) => routing.snsTopics[name]);
  return {
    arns: [...new Set(named.filter((arn): arn is string => arn !== undefined))],
    alertTopic: named.includes(undefined),
  };
}

/** POSIX single-quoting: the path may hold spaces or `$`. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
