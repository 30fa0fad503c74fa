/**
 * Loopback stand-ins for the AWS services the deployed functions call besides DynamoDB (dynalite) and
 * SNS (`startSnsPlatform`): Secrets Manager's `GetSecretValue` (awsJson1_1), answering as the service
 * documents, and recording what it received.
 * @see https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 */
import { startLoopback, type Loopback, type ScriptedReply } from '../../helpers/loopback.js';

const json = (body: unknown, status = 200): ScriptedReply => ({
  status,
  headers: { 'content-type': 'application/x-amz-json-1.1' },
  body: JSON.stringify(body),
});

export interface SecretsManagerStandIn {
  endpoint: string;
  server: Loopback;
  close(): Promise<void>;
}

/**
 * @param secrets the `SecretString` of each secret, by ARN (a JSON object, as the settings secret holds)
 */
export async function startSecretsManager(
  secrets: Record<string, Record<string, string>>,
): Promise<SecretsManagerStandIn> {
  const server = await startLoopback((request) => {
    if (request.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue')
      return json({ __type: 'InvalidRequestException', message: 'unsupported action' }, 400);
    const { SecretId } = JSON.parse(request.body.toString('utf8')) as { SecretId: string };
    const secret = secrets[SecretId];
    if (!secret)
      return json(
        { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." },
        400,
      );
    return json({
      ARN: SecretId,
      Name: SecretId.split(':').at(-1),
      SecretString: JSON.stringify(secret),
      VersionId: '00000000-0000-0000-0000-000000000001',
      VersionStages: ['AWSCURRENT'],
      CreatedDate: 1_764_500_000,
    });
  });
  return { endpoint: server.url, server, close: () => server.close() };
}
/** A schedule as `CreateSchedule` received it. */
export interface Schedule {
  name: string;
  groupName: string;
  scheduleExpression: string;
  actionAfterCompletion?: string;
  target: { Arn: string; RoleArn: string; Input?: string; DeadLetterConfig?: { Arn: string } };
}

export interface SchedulerStandIn {
  endpoint: string;
  server: Loopback;
  /** Schedules created and not deleted, by group and name. */
  schedules: Map<string, Schedule>;
  close(): Promise<void>;
}

export async function startScheduler(): Promise<SchedulerStandIn> {
  const schedules = new Map<string, Schedule>();
  const server = await startLoopback((request) => {
    const url = new URL(request.path, 'http://scheduler');
    const name = decodeURIComponent(url.pathname.replace(/^\/schedules\//, ''));
    if (request.method === 'POST') {
      const body = JSON.parse(request.body.toString('utf8'));
      const group = body.GroupName ?? 'default';
      schedules.set(`${group}/${name}`, {
        name,
        groupName: group,
        scheduleExpression: body.ScheduleExpression,
        actionAfterCompletion: body.ActionAfterCompletion,
        target: body.Target,
      });
      return json({ ScheduleArn: `arn:aws:scheduler:eu-west-1:123456789012:schedule/${group}/${name}` });
    }
    if (request.method === 'DELETE') {
      const key = `${url.searchParams.get('groupName') ?? 'default'}/${name}`;
      if (!schedules.delete(key)) return json({ Message: `Schedule ${name} does not exist.` }, 404);
      return json({});
    }
    return json({ Message: 'unsupported' }, 400);
  });
  return { endpoint: server.url, server, schedules, close: () => server.close() };
}
