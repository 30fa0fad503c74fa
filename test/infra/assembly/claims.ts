/**
 * Which test of the tier loads and calls each lazily loaded chunk of each deployed function (by the
 * chunk's name, `chunks.ts`), or, prefixed `never: `, why no deployed configuration of that function
 * reaches it. test/infra/assets.test.ts fails when an asset holds a lazily loaded chunk not listed here;
 * each test file named here ends by checking that its chunks ran (`expectClaimedChunksRan`).
 */
import { expect } from 'vitest';
import type { ChunkCoverage } from './chunks.js';

/** The AWS SDK's credential sources other than the environment Lambda sets: walked once in that test. */
const CREDENTIAL_CHAIN = 'deployed-credentials.test.ts';

/** What the SDK bundles for sources and operations no function here uses. */
const SDK_UNUSED = {
  '@aws-sdk/credential-provider-sso':
    "never: a person's IAM Identity Center session (`aws sso login`): the chain skips it without sso_* settings",
  loadSso: 'never: the SSO client of that IAM Identity Center source',
  'sso-oidc': 'never: refreshes an IAM Identity Center token of that source',
  '@aws-sdk/credential-provider-login': "never: a console sign-in session (`aws login`), a person's",
  signin: 'never: the sign-in client of that console session source',
  '@aws-sdk/credential-provider-env':
    'never: reached only from a shared-config profile with credential_source = Environment (role chaining)',
  'event-streams': 'never: event-stream operations (DynamoDB, SNS, Secrets Manager and Scheduler calls here have none)',
};

const ENVIRONMENT_CREDENTIALS =
  "never: Lambda sets the role's session in the environment (the receiver's asset walks the same chain once)";
const ESCALATION_OFF_WEBHOOK = "only npm start's in-process escalation timers and the receiver's routes reach it";

export const CHUNK_CLAIMS: Record<string, Record<string, string>> = {
  'Receiver/Function': {
    'off-webhook': 'deployed-routes.test.ts',
    render: 'deployed-routes.test.ts',
    pagerduty: 'deployed-channels.test.ts',
    'web-api-client': 'deployed-channels.test.ts',
    load: 'lambda-bundle.test.ts',
    receive: 'lambda-amp.test.ts',
    sigv4: 'lambda-amp.test.ts',
    'eventbridge-scheduler': 'deployed-escalation.test.ts',
    'follow-up-schedules': 'deployed-follow-ups.test.ts',
    '@aws-sdk/client-scheduler': 'deployed-escalation.test.ts',
    '@aws-sdk/client-lambda': 'lambda-entry.test.ts',
    '@aws-sdk/credential-provider-ini': CREDENTIAL_CHAIN,
    '@aws-sdk/credential-provider-process': CREDENTIAL_CHAIN,
    '@aws-sdk/credential-provider-web-identity': CREDENTIAL_CHAIN,
    '@aws-sdk/credential-provider-http': CREDENTIAL_CHAIN,
    '@smithy/credential-provider-imds': CREDENTIAL_CHAIN,
    sts: CREDENTIAL_CHAIN,
    ...SDK_UNUSED,
  },
  // The check builds the receiver's channels (the routing file's too) and sends to the escalation targets and
  // the threads those channels keep; the other chunks come with the configuration and credential chain.
  'Escalation/Function': {
    pagerduty: 'deployed-escalation-channels.test.ts',
    'web-api-client': 'deployed-escalation-channels.test.ts',
    load: 'deployed-escalation-channels.test.ts',
    'off-webhook': `never: ${ESCALATION_OFF_WEBHOOK}`,
    sigv4: 'deployed-escalation.test.ts',
    'eventbridge-scheduler': 'never: the check schedules nothing (ESCALATION_SCHEDULE_GROUP is set on the receiver)',
    '@aws-sdk/client-scheduler': 'never: the check schedules nothing (the receiver does)',
    'follow-up-schedules':
      'never: the check keeps no follow-ups (it acknowledges nothing; the receiver keeps them and schedules their tries)',
    '@aws-sdk/client-lambda': 'never: the check acknowledges no alert set (the receiver dispatches its steps)',
    '@aws-sdk/credential-provider-ini': ENVIRONMENT_CREDENTIALS,
    '@aws-sdk/credential-provider-process': ENVIRONMENT_CREDENTIALS,
    '@aws-sdk/credential-provider-web-identity': ENVIRONMENT_CREDENTIALS,
    '@aws-sdk/credential-provider-http': ENVIRONMENT_CREDENTIALS,
    '@smithy/credential-provider-imds': ENVIRONMENT_CREDENTIALS,
    sts: ENVIRONMENT_CREDENTIALS,
    ...SDK_UNUSED,
  },
};

/**
 * Expects every chunk `testFile` answers for (in {@link CHUNK_CLAIMS}, for the coverage's function) to
 * have been loaded and called by the invocations that wrote `coverage`.
 */
export function expectClaimedChunksRan(coverage: ChunkCoverage, testFile: string): void {
  const claims = CHUNK_CLAIMS[coverage.function.path] ?? {};
  const mine = Object.entries(claims)
    .filter(([, owner]) => owner === testFile)
    .map(([name]) => name);
  expect(mine.length, `${testFile} answers for no chunk of ${coverage.function.path}`).toBeGreaterThan(0);
  const report = coverage.report().filter((c) => mine.includes(c.name));
  expect(report.map((c) => c.name).sort()).toEqual([...mine].sort());
  expect(report.filter((c) => !c.loaded || !c.called)).toEqual([]);
}
