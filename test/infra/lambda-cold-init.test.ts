/**
 * What the receiver's cold init does, checked on the asset as deployed (and esbuild's metafile of it): the
 * work a first request may not need stays out of the import. The first Intl object of a process loads
 * ICU data (~20–30 ms of a cold init, `npm run bench -- floor`), so the formatters are built on first use;
 * the routes people click and the scheduled checks are chunks that only `await import()` reaches.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bundleMetafile, deployedFunction, handlerModule } from './assembly/deployed.js';

const ENV = {
  AWS_REGION: 'eu-west-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  TABLE_NAME: 'cold-init',
  AWS_LAMBDA_FUNCTION_NAME: 'receiver',
  WEBHOOK_TOKEN: 'cold-init-token-0123456789',
  SLACK_WEBHOOK_URL: 'http://127.0.0.1:9/services/T000/B000/x',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** Imports `file` in a fresh Node with every Intl constructor counted; returns the names of those built during the import. */
async function intlBuiltAtImport(file: string): Promise<string[]> {
  const script = `const built = [];
for (const name of Object.getOwnPropertyNames(Intl)) if (typeof Intl[name] === 'function' && /^[A-Z]/.test(name))
  Intl[name] = new Proxy(Intl[name], { construct: (target, args, newTarget) => (built.push(name), Reflect.construct(target, args, newTarget)) });
await import(${JSON.stringify(file)});
process.stdout.write(JSON.stringify(built));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
    env: { PATH: process.env.PATH ?? '', ...ENV },
    timeout: 30_000,
  });
  return JSON.parse(stdout);
}

describe("the deployed receiver's cold init", () => {
  const receiver = deployedFunction('default', 'Receiver/Function');
  const metafile = bundleMetafile('functions/lambda.ts');

  it('builds no Intl object (number formats, collator, segmenter are built on first use)', async () => {
    expect(await intlBuiltAtImport(handlerModule(receiver))).toEqual([]);
  }, 60_000);

  it('loads none of what a webhook never uses: the acknowledgement page, Slack interactions, charts, the heartbeat and escalation checks, the SNS event schema, an unconfigured PagerDuty', () => {
    const outputs = metafile.outputs;
    const atInit = new Set<string>();
    const visit = (file: string) => {
      if (atInit.has(file) || !outputs[file]) return;
      atInit.add(file);
      for (const i of outputs[file]!.imports) if (i.kind === 'import-statement') visit(i.path);
    };
    visit(Object.keys(outputs).find((o) => o.endsWith('/index.mjs'))!);
    const loaded = new Set([...atInit].flatMap((o) => Object.keys(outputs[o]!.inputs)));
    const lazy = [
      'shared/ack/routes.ts',
      'shared/ack/page.ts',
      'shared/ack/slack-interactions.ts',
      'shared/chart/routes.ts',
      'shared/heartbeat/check.ts',
      'shared/escalation/escalation.ts',
      'shared/amp/sns-event.ts',
    ];
    expect(lazy.filter((m) => loaded.has(m))).toEqual([]);
    // Each is in the asset all the same, reached by `await import()`.
    const all = new Set(Object.values(outputs).flatMap((o) => Object.keys(o.inputs)));
    expect(lazy.filter((m) => !all.has(m))).toEqual([]);
    // What the first webhook needs is loaded at init.
    expect(
      ['shared/pipeline/index.ts', 'shared/ack/tracker.ts', 'shared/alertmanager/schema.ts'].filter(
        (m) => !loaded.has(m),
      ),
    ).toEqual([]);
  });
});
