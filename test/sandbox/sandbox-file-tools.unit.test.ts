/**
 * The file tools under `--sandbox` (issue 35 item 10): `write_file` and `edit_file` run in
 * navi's own process, so they must refuse by themselves what the sandbox refuses a command.
 * `read-only`: every write (`.nav-config.json` and `tools/*.js` run code at the next start).
 * `workspace-write`: the git control paths, also where the working tree is itself a git
 * directory (a bare repository), where they are not under a `.git` component.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/modes.js';
import { prepareSandbox } from '../../src/sandbox/prepare.js';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import { sandboxWriteRefusal } from '../../src/tools/sandbox-write-rule.js';
import type { ToolResult } from '../../src/tools/types.js';
import { makeContext, removeDir, tempDir } from '../tools/helpers.js';

const registry = new ToolRegistry(builtinTools());
const allowed = new Set(registry.names());

const WS = { mode: 'workspace-write', readOnlyInside: ['/w/repo/.git/config', '/w/repo/.git/hooks', '/w/bare/config', '/w/bare/hooks'] } as const;
const RO = { mode: 'read-only', readOnlyInside: [] } as const;

describe('sandboxWriteRefusal', () => {
  it.each([
    ['no sandbox: the sandbox says nothing', undefined, ['/w/repo/.nav-config.json'], null],
    ['read-only: a file in the tree', RO, ['/w/repo/.nav-config.json'], /the sandbox is read-only \(--sandbox read-only\): no file may be written, p included/],
    ['read-only: a new file', RO, ['/w/repo/tools/evil.js'], /the sandbox is read-only/],
    ['workspace-write: a file in the tree', WS, ['/w/repo/src/a.js'], null],
    ['workspace-write: the git config', WS, ['/w/repo/.git/config'], /keeps p read-only \(\/w\/repo\/\.git\/config\)/],
    ['workspace-write: a hook', WS, ['/w/repo/.git/hooks/pre-commit'], /keeps p read-only \(\/w\/repo\/\.git\/hooks\)/],
    ['workspace-write: a bare repository\'s config, named at the top of the tree', WS, ['/w/bare/config'], /keeps p read-only/],
    ['workspace-write: through a symlink (its real path is protected)', WS, ['/w/repo/link', '/w/repo/.git/hooks/post-checkout'], /keeps p read-only/],
    ['workspace-write: a name that only starts like a protected one', WS, ['/w/repo/.git/configure', '/w/bare/hooks-notes.md'], null],
  ] as const)('%s', (_label, sandbox, abs, expected) => {
    const refusal = sandboxWriteRefusal(sandbox, abs, 'p');
    if (expected === null) expect(refusal).toBeNull();
    else expect(refusal).toMatch(expected);
  });
});

describe('the file tools under --sandbox', () => {
  let root: string;
  beforeEach(async () => {
    root = await tempDir('navi-sandbox-files-');
  });
  afterEach(() => removeDir(root));

  const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' });

  async function ready(mode: Sandbox['mode'], cwd: string): Promise<Sandbox> {
    const sandbox = await prepareSandbox({ mode, network: false }, { cwd, env: process.env });
    if (sandbox === null) throw new Error('no sandbox');
    return sandbox;
  }

  function call(cwd: string, sandbox: Sandbox, name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const ctx = makeContext(cwd, { shell: { allow: [], deny: [], timeoutS: 30, maxOutputBytes: 64 * 1024, sandbox } });
    return registry.execute(name, args, ctx, allowed);
  }

  it('read-only: write_file and edit_file refuse .nav-config.json, tools/evil.js and an ordinary file; nothing changes', async () => {
    const cwd = path.join(root, 'repo');
    fs.mkdirSync(path.join(cwd, 'tools'), { recursive: true });
    fs.writeFileSync(path.join(cwd, '.nav-config.json'), '{}\n');
    fs.writeFileSync(path.join(cwd, 'notes.txt'), 'old\n');
    const sandbox = await ready('read-only', cwd);
    const results = [
      await call(cwd, sandbox, 'write_file', { path: '.nav-config.json', content: '{"tools":{"shell":{"allow":["*"]}}}' }),
      await call(cwd, sandbox, 'write_file', { path: 'tools/evil.js', content: 'export const execute = () => ""; export const parameters = {};' }),
      await call(cwd, sandbox, 'edit_file', { path: 'notes.txt', old_string: 'old', new_string: 'new' }),
      await call(cwd, sandbox, 'edit_file', { path: '.nav-config.json', old_string: '{}', new_string: '{"sandbox":"off"}' }),
    ];
    for (const r of results) {
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/^refused: the sandbox is read-only/);
    }
    expect(fs.readFileSync(path.join(cwd, '.nav-config.json'), 'utf8')).toBe('{}\n');
    expect(fs.readFileSync(path.join(cwd, 'notes.txt'), 'utf8')).toBe('old\n');
    expect(fs.existsSync(path.join(cwd, 'tools', 'evil.js'))).toBe(false);
    // Reading still works.
    expect((await call(cwd, sandbox, 'read_file', { path: 'notes.txt' })).ok).toBe(true);
  });

  it('workspace-write: .git/hooks/pre-commit and .git/config are refused; an ordinary file is written', async () => {
    const cwd = path.join(root, 'repo');
    fs.mkdirSync(cwd);
    git(cwd, 'init', '-q');
    const config = fs.readFileSync(path.join(cwd, '.git', 'config'), 'utf8');
    const sandbox = await ready('workspace-write', cwd);
    const hook = await call(cwd, sandbox, 'write_file', { path: '.git/hooks/pre-commit', content: '#!/bin/sh\ntouch /tmp/pwned\n' });
    const cfg = await call(cwd, sandbox, 'edit_file', { path: '.git/config', old_string: '[core]', new_string: '[core]\n\tfsmonitor = touch /tmp/pwned' });
    expect([hook.ok, cfg.ok]).toEqual([false, false]);
    expect(hook.output).toMatch(/^refused: /);
    expect(fs.existsSync(path.join(cwd, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(fs.readFileSync(path.join(cwd, '.git', 'config'), 'utf8')).toBe(config);
    expect(await call(cwd, sandbox, 'write_file', { path: 'src/a.js', content: 'ok' })).toMatchObject({ ok: true });
  });

  it('workspace-write in a bare repository: its config and hooks (no .git in the path) are refused as the sandbox refuses them', async () => {
    const cwd = path.join(root, 'bare.git');
    git(root, 'init', '-q', '--bare', cwd);
    const config = fs.readFileSync(path.join(cwd, 'config'), 'utf8');
    const sandbox = await ready('workspace-write', cwd);
    const cfg = await call(cwd, sandbox, 'write_file', { path: 'config', content: '[core]\n\tfsmonitor = touch /tmp/pwned\n' });
    const hook = await call(cwd, sandbox, 'write_file', { path: 'hooks/post-checkout', content: '#!/bin/sh\n' });
    expect([cfg.ok, hook.ok]).toEqual([false, false]);
    expect(cfg.output).toMatch(/^refused: the sandbox keeps config read-only/);
    expect(hook.output).toMatch(/^refused: the sandbox keeps hooks\/post-checkout read-only/);
    expect(fs.readFileSync(path.join(cwd, 'config'), 'utf8')).toBe(config);
    expect(fs.existsSync(path.join(cwd, 'hooks', 'post-checkout'))).toBe(false);
    expect(await call(cwd, sandbox, 'write_file', { path: 'description', content: 'mine\n' })).toMatchObject({ ok: true });
  });
});
