/**
 * What `npm pack` ships and what a git install runs (issue 11): a LICENSE matching
 * package.json's `license`, `docs/events.schema.json` (scripts validate navi's events with it),
 * the built bin, and a `prepare` hook that builds `dist/` (scripts/prepare.js, which also works
 * around npm/cli#8440 for `npm i -g git+…`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

const TIMEOUT_MS = 60_000;

describe('the package', () => {
  it('LICENSE is the license package.json names', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { license: string };
    const license = fs.readFileSync(path.join(REPO_ROOT, 'LICENSE'), 'utf8');
    expect(pkg.license).toBe('MIT');
    expect(license.split('\n')[0]).toBe('MIT License');
    expect(license).toContain('Permission is hereby granted, free of charge');
  });

  it('npm pack ships the bin, LICENSE, README, docs/events.schema.json and the live page', () => {
    // --ignore-scripts: dist/ is already built (npm test builds first); prepare would rebuild it under running tests.
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, encoding: 'utf8' });
    const [packed] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
    const files = (packed?.files ?? []).map((f) => f.path);
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'docs/events.schema.json', 'dist/cli/main.cjs', 'dist/cli/run-entry.cjs', 'dist/cli/app.js', 'prompts/agent/output-schema.md', 'src/serve/page/index.html', 'src/serve/page/app.js']));
    const shipped = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'docs', 'events.schema.json'), 'utf8')) as { title: string };
    expect(shipped.title).toMatch(/navi event/);
  }, TIMEOUT_MS);

  it('prepare builds dist/ through scripts/prepare.js, which installs the build tools when npm gave none', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepare).toBe('node scripts/prepare.js');
    const script = fs.readFileSync(path.join(REPO_ROOT, 'scripts', 'prepare.js'), 'utf8');
    expect(script).toContain("'--ignore-scripts'");
    expect(script).toContain("path.join(ROOT, 'scripts', 'build.js')");
  });

  // Needs the npm registry and a few minutes: opt in with NAVI_TEST_GIT_INSTALL=1 (it installs
  // the committed HEAD of this repository, globally, into a temporary prefix).
  it.skipIf(!process.env.NAVI_TEST_GIT_INSTALL)('npm i -g git+file://… installs a bin that runs and opens its database', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-git-install-'));
    try {
      const branch = execFileSync('git', ['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
      execFileSync('npm', ['i', '-g', '--prefix', path.join(dir, 'prefix'), `git+file://${REPO_ROOT}#${branch}`], { cwd: dir, stdio: 'ignore' });
      const bin = path.join(dir, 'prefix', 'bin', 'navi');
      expect(execFileSync(bin, ['--version'], { cwd: dir, encoding: 'utf8' })).toMatch(/^\d+\.\d+\.\d+\n$/);
      const sessions = execFileSync(bin, ['sessions', 'list'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NAVI_DATA_DIR: path.join(dir, 'data') } });
      expect(sessions).toMatch(/no sessions yet/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});
