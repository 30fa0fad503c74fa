/**
 * `npm start` with `AWS_ENDPOINT_URL_DYNAMODB` pointing nowhere must stop with one line naming the
 * setting and what failed, not a stack trace that names neither; without a region or credentials (the SDK
 * signs even DynamoDB Local's requests), the line says which to set.
 */
import { describe, expect, it } from 'vitest';
import { runPipelineUntilExit as runServer } from '../helpers/pipeline-process.js';

describe('npm start with an unreachable AWS_ENDPOINT_URL_DYNAMODB', () => {
  it('exits 1 with a line naming the setting and the network error, no stack trace', async () => {
    const { code, out } = await runServer({
      PORT: '0',
      HOST: '127.0.0.1',
      // Port 9 (discard) on loopback: nothing listens there.
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
      AWS_REGION: 'local',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
    });
    expect(code, out).toBe(1);
    expect(out).toMatch(/^llm-alert-pipeline: AWS_ENDPOINT_URL_DYNAMODB: .*(ECONNREFUSED|not reachable)/m);
    expect(out).not.toMatch(/^\s+at /m);
  }, 90_000);

  it('needs no region or credentials to get that far: the line names the network error, not a missing setting', async () => {
    // No region, no keys, an empty config file and no profile: a local endpoint takes placeholder ones.
    const { code, out } = await runServer({
      PORT: '0',
      HOST: '127.0.0.1',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:9',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_EC2_METADATA_DISABLED: 'true',
    });
    expect(code, out).toBe(1);
    expect(out).toMatch(/^llm-alert-pipeline: AWS_ENDPOINT_URL_DYNAMODB: .*(ECONNREFUSED|not reachable)/m);
    expect(out).not.toMatch(/set AWS_/);
  }, 90_000);
});
