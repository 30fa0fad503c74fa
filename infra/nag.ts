/**
 * The cdk-nag rule packs the stack must pass: AWS Solutions (security best practice) and Serverless
 * (Lambda, SQS, SNS operations). `infra/app.ts` runs them on every `cdk synth` (a finding fails the
 * synth) and `test/infra/nag.test.ts` on both stack shapes. A finding we accept is acknowledged on
 * its resource, next to the code that makes it, with `Validations.of(resource).acknowledge({ id, reason })`.
 * @see https://github.com/cdklabs/cdk-nag/blob/main/RULES.md
 */
import { AwsSolutionsChecks, ServerlessChecks, type NagPack } from 'cdk-nag';

/** Fresh instances (a pack collects its findings while it runs). */
export function nagPacks(): NagPack[] {
  return [new AwsSolutionsChecks(), new ServerlessChecks()];
}
