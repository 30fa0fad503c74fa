import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../shared/runtime/config.js';
import { configProblems as problems } from '../../helpers/config.js';

describe('DATA_DIR', () => {
  it('is unset by default (the embedded store in memory), made absolute when set', () => {
    expect(loadConfig({}).dataDir).toBeUndefined();
    expect(loadConfig({ DATA_DIR: '/var/lib/llm-alert-pipeline' }).dataDir).toBe('/var/lib/llm-alert-pipeline');
    expect(loadConfig({ DATA_DIR: 'state' }).dataDir).toBe(`${process.cwd()}/state`);
  });

  it('is refused together with a DynamoDB table, naming both settings', () => {
    expect(problems({ DATA_DIR: '/data', TABLE_NAME: 'alerts' })).toEqual([
      'DATA_DIR: set together with TABLE_NAME; choose one (DATA_DIR keeps the embedded store in a folder, TABLE_NAME uses a DynamoDB table)',
    ]);
    expect(problems({ DATA_DIR: '/data', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000' })[0]).toMatch(
      /^DATA_DIR: set together with AWS_ENDPOINT_URL_DYNAMODB;/,
    );
  });
});
