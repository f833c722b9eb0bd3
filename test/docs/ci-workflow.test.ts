/**
 * The example GitHub Actions workflow (docs/examples/github-actions-navi.yml) is what a user
 * copies: it must be a valid workflow (checked against SchemaStore's github-workflow JSON
 * Schema, committed in test/fixtures/schemas/ with its source), and what it does must be what
 * navi offers — it installs navi, runs a task file with `--replay` and the report flags, and
 * publishes the files those flags write. The flags it uses are checked against the built CLI's
 * `navi loop --help`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, cleanEnv, makeTempDir, runNavi } from '../support/cli.js';

const WORKFLOW = path.join(REPO_ROOT, 'docs', 'examples', 'github-actions-navi.yml');
const SCHEMA = path.join(REPO_ROOT, 'test', 'fixtures', 'schemas', 'github-workflow.json');

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  if?: string;
}

function workflow(): { jobs: Record<string, { steps: Step[] }> } {
  return load(fs.readFileSync(WORKFLOW, 'utf8')) as { jobs: Record<string, { steps: Step[] }> };
}

describe('the example GitHub Actions workflow', () => {
  it('is valid against the GitHub workflow JSON Schema', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(JSON.parse(fs.readFileSync(SCHEMA, 'utf8')) as object);
    const ok = validate(workflow());
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('the schema is real: a job without steps or runs-on is refused', () => {
    const ajv = new Ajv({ strict: false });
    const validate = ajv.compile(JSON.parse(fs.readFileSync(SCHEMA, 'utf8')) as object);
    expect(validate({ on: 'push', jobs: { x: { steps: 'nope' } } })).toBe(false);
  });

  it('installs navi, replays a task file with reports, and publishes them', async () => {
    const steps = Object.values(workflow().jobs).flatMap((j) => j.steps);
    const runs = steps.map((s) => s.run ?? '').join('\n');
    expect(runs).toMatch(/npm install --global/);
    // Continuation lines joined: the navi command as the shell runs it.
    const command = /navi loop [^\n]*/.exec(runs.replace(/\\\n\s*/g, ' '))?.[0] ?? '';
    expect(command).toMatch(/^navi loop tasks\/\S+\.yaml /);
    // A flag's value as a path in the workspace (`"$GITHUB_WORKSPACE/reports/x"` → `reports/x`).
    const flag = (name: string): string | undefined => new RegExp(`--${name} (\\S+)`).exec(command)?.[1]?.replace(/"/g, '').replace('$GITHUB_WORKSPACE/', '');
    expect(flag('replay')).toMatch(/\.jsonl$/);
    const junit = flag('junit');
    const summary = flag('summary');
    expect(junit).toBeDefined();
    expect(summary).toBeDefined();
    // The report folder exists before navi runs (navi refuses a missing one).
    expect(runs).toContain(`mkdir -p "$GITHUB_WORKSPACE/${path.dirname(junit ?? '')}"`);
    const reporter = steps.find((s) => s.uses?.includes('junit-report') === true);
    expect(reporter?.with?.report_paths).toBe(junit);
    expect(reporter?.if).toMatch(/!cancelled\(\)/);
    const upload = steps.find((s) => s.uses?.startsWith('actions/upload-artifact') === true);
    expect(String(upload?.with?.path)).toContain(path.dirname(summary ?? ''));

    // Every flag it passes is one `navi loop` has.
    const help = await runNavi(['loop', '--help'], { cwd: makeTempDir('wf'), env: cleanEnv() });
    expect(help.code).toBe(0);
    for (const f of command.match(/--[a-z-]+/g) ?? []) expect(help.stdout).toContain(f);
  });
});
