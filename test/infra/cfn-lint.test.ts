/**
 * cfn-lint, AWS's own CloudFormation linter (installed on these machines; `.ci/run` checks it), over the
 * template of every documented stack variant as `cdk synth` writes it: no error, and no warning but the
 * ones listed here with why they are harmless. Run once over all templates (one Python start).
 * @see https://github.com/aws-cloudformation/cfn-lint
 */
import { execFile } from 'node:child_process';
import { relative } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { assemblyDir, deployed } from './assembly/deployed.js';
import { VARIANTS, type VariantName } from './assembly/variants.js';

interface Finding {
  Filename: string;
  Level: 'Error' | 'Warning' | 'Informational';
  Message: string;
  Rule: { Id: string };
}

/**
 * Warnings we accept, by rule and message, with the reason. W3005: CDK makes a function depend on its
 * role's default policy *and* on the role (so it is created only once it may do its work); the role is
 * also referenced by `Role: Fn::GetAtt`, which cfn-lint calls a redundant dependency. Harmless.
 */
const ACCEPTED: { rule: string; message: RegExp; reason: string }[] = [
  {
    rule: 'W3005',
    message:
      /^'\w+Role[0-9A-F]{8}' dependency already enforced by a 'GetAtt' at 'Resources\/\w+Function[0-9A-F]{8}\/Properties\/Role'$/,
    reason: "CDK's DependsOn on the function's role, beside its GetAtt: redundant, not wrong",
  },
];

/** The region cfn-lint checks resource types and values against: the documentation's example region. */
const REGION = 'eu-west-1';

describe('cfn-lint over every variant', () => {
  const variants = Object.keys(VARIANTS) as VariantName[];
  let findings: Finding[];

  beforeAll(async () => {
    const files = variants.map((v) => deployed(v).templateFile);
    // Exit codes: 0 clean, 2 errors, 4 warnings, 8 informational (bits), 1 a crash or bad usage.
    const run = await promisify(execFile)('cfn-lint', ['--format', 'json', '--regions', REGION, '--', ...files], {
      maxBuffer: 32 * 1024 * 1024,
    }).catch((err: { code?: number; stdout?: string; stderr?: string }) => {
      if (typeof err.code !== 'number' || err.code === 1 || !err.stdout) throw err;
      return { stdout: err.stdout };
    });
    findings = JSON.parse(run.stdout) as Finding[];
  }, 120_000);

  const show = (f: Finding) => `${relative(assemblyDir(), f.Filename)}: ${f.Rule.Id} ${f.Message}`;

  it.each(variants)('finds no error in the %s template', (variant) => {
    const file = deployed(variant).templateFile;
    expect(findings.filter((f) => f.Filename === file && f.Level === 'Error').map(show)).toEqual([]);
  });

  it('warns only of what is accepted above, each acceptance still needed', () => {
    const warnings = findings.filter((f) => f.Level === 'Warning');
    const unexplained = warnings.filter(
      (w) => !ACCEPTED.some((a) => a.rule === w.Rule.Id && a.message.test(w.Message)),
    );
    expect(unexplained.map(show)).toEqual([]);
    for (const a of ACCEPTED)
      expect(
        warnings.some((w) => w.Rule.Id === a.rule && a.message.test(w.Message)),
        a.rule,
      ).toBe(true);
  });
});
