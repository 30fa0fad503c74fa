/**
 * The AMP alert manager definition the project ships (infra/amp/alertmanager-definition.yml): its
 * `alertmanager_config`, with the placeholders filled and its template files, passes Alertmanager's
 * own `amtool check-config`; its receiver sends the shipped JSON template with a short ASCII subject
 * (SNS refuses longer ones and AMP then replaces them). That the template renders each webhook fixture
 * back into the same group is test/unit/amp/recorded.test.ts's and convert.test.ts's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { findBinary, runBinary } from '../helpers/binaries.js';
import { fixture } from '../helpers/fixtures.js';
import { renderTemplate, SHIPPED_SUBJECT, shippedDefinition } from '../fixtures/amp/render.js';

describe('infra/amp/alertmanager-definition.yml', () => {
  const dir = mkdtempSync(`${tmpdir()}/amp-definition-`);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is a valid Alertmanager configuration once TOPIC_ARN and REGION are filled in', async () => {
    const { templates, config } = shippedDefinition();
    for (const [name, content] of Object.entries(templates)) writeFileSync(`${dir}/${name}`, content);
    const filled = JSON.parse(
      JSON.stringify(config)
        .replaceAll('TOPIC_ARN', 'arn:aws:sns:eu-west-1:123456789012:amp-alerts')
        .replaceAll('"REGION"', '"eu-west-1"'),
    );
    writeFileSync(
      `${dir}/am.yml`,
      stringify({ ...filled, templates: Object.keys(templates).map((n) => `${dir}/${n}`) }),
    );
    const result = await runBinary(findBinary('amtool'), ['check-config', `${dir}/am.yml`]);
    expect(result.stderr + result.stdout).toMatch(/SUCCESS/);
    expect(result.code).toBe(0);
    const sns = (filled as typeof config).receivers[0]!.sns_configs[0]! as { message: string; send_resolved?: boolean };
    expect(sns.message).toBe('{{ template "llm_alert_pipeline.json" . }}');
    expect(sns.send_resolved).toBe(true);
  });

  it('gives SNS a subject within 100 printable ASCII characters', () => {
    for (const name of [
      'firing-kv-cache-critical',
      'resolved-queue-backlog-two-models',
      'firing-gpu-memory-leak',
    ] as const) {
      expect(renderTemplate(fixture(name), SHIPPED_SUBJECT)).toMatch(/^[\x20-\x7e]{1,100}$/);
    }
  });
});
