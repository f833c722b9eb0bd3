/** The sandbox's pure rules, one table each: mounts, the macOS profile, refusals, layout, config. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { NaviConfigSchema } from '../../src/config/schema.js';
import { parseTaskText, taskSandboxOverride } from '../../src/loop/task-file.js';
import { bwrapArgs, bwrapMounts } from '../../src/sandbox/bwrap-args.js';
import { DEFAULT_SANDBOX_ENV, describePolicy, type Sandbox } from '../../src/sandbox/modes.js';
import { prepareSandbox, writableLayout } from '../../src/sandbox/prepare.js';
import { refusedPath, sandboxRefusals } from '../../src/sandbox/refusals.js';
import { seatbeltProfile } from '../../src/sandbox/seatbelt-profile.js';
import { sandboxEnv } from '../../src/sandbox/wrap.js';

const BOX: Sandbox = {
  mode: 'workspace-write',
  network: false,
  kind: 'bwrap',
  launcher: '/usr/bin/bwrap',
  cwd: '/w/repo',
  writable: ['/w/repo'],
  readOnlyInside: ['/w/repo/.git/config', '/w/repo/.git/hooks'],
  pinned: [],
  hidden: [],
  keepVisible: [],
  tmpDir: '/tmp/navi-sandbox-x',
  env: DEFAULT_SANDBOX_ENV,
};

/** BOX with some fields changed. */
function box(over: Partial<Sandbox>): Sandbox {
  return { ...BOX, ...over };
}

/** `--flag a b` pairs of an argument list, as strings, for order-insensitive checks. */
function pairs(args: readonly string[], flag: string, arity: number): string[] {
  return args.flatMap((a, i) => (a === flag ? [args.slice(i + 1, i + 1 + arity).join(' ')] : []));
}

describe('bwrap arguments', () => {
  it.each([
    ['workspace-write, no network', BOX, ['/tmp/navi-sandbox-x /tmp/navi-sandbox-x', '/w/repo /w/repo'], true],
    ['network allowed', box({ network: true }), ['/tmp/navi-sandbox-x /tmp/navi-sandbox-x', '/w/repo /w/repo'], false],
    ['read-only', box({ mode: 'read-only', writable: [], readOnlyInside: [] }), ['/tmp/navi-sandbox-x /tmp/navi-sandbox-x'], true],
  ])('%s', (_name, sandbox, binds, unshareNet) => {
    const args = bwrapArgs(sandbox, 'echo hi');
    expect(args.slice(0, 3)).toEqual(['--ro-bind', '/', '/']);
    expect(pairs(args, '--bind', 2)).toEqual(binds);
    expect(args.includes('--unshare-net')).toBe(unshareNet);
    expect(args).toContain('--unshare-pid');
    expect(args).toContain('--die-with-parent');
    // A new session would take the command out of the process group navi kills.
    expect(args).not.toContain('--new-session');
    expect(args.slice(-6)).toEqual(['--chdir', sandbox.cwd, '--', '/bin/sh', '-c', 'echo hi']);
  });

  it('the protected git paths are bound read-only after (over) the writable tree', () => {
    const args = bwrapMounts(BOX);
    const lastWritable = args.lastIndexOf('--bind');
    const firstProtected = args.indexOf('--ro-bind-try');
    expect(firstProtected).toBeGreaterThan(lastWritable);
    expect(pairs(args, '--ro-bind-try', 2)).toEqual(['/w/repo/.git/config /w/repo/.git/config', '/w/repo/.git/hooks /w/repo/.git/hooks']);
  });

  it('points every temp variable at the private directory', () => {
    expect(sandboxEnv(BOX, { PATH: '/bin', TMPDIR: '/tmp' })).toEqual({ PATH: '/bin', TMPDIR: BOX.tmpDir, TMP: BOX.tmpDir, TEMP: BOX.tmpDir });
  });
});

describe('the macOS profile (written, not run here)', () => {
  it.each([
    ['no network', BOX, ['(deny file-write*)', '(subpath "/w/repo")', '(subpath "/tmp/navi-sandbox-x")', '(deny network*)', '(subpath "/w/repo/.git/hooks")']],
    ['network', box({ network: true }), ['(deny file-write*)', '(subpath "/w/repo")']],
    ['a quote in a path is escaped', box({ writable: ['/w/a"b'] }), ['(subpath "/w/a\\"b")']],
  ])('%s', (_name, sandbox, parts) => {
    const profile = seatbeltProfile(sandbox);
    for (const part of parts) expect(profile).toContain(part);
    expect(profile.includes('(deny network*)')).toBe(!sandbox.network);
  });
});

describe('refusals read from output', () => {
  it.each([
    ['dash', '/bin/sh: 1: cannot create /home/u/x: Read-only file system', '/home/u/x'],
    ['coreutils', "touch: cannot touch '/etc/x': Read-only file system", '/etc/x'],
    ['coreutils, curly quotes', 'mkdir: cannot create directory ‘/opt/d’: Read-only file system', '/opt/d'],
    ['node', "Error: EROFS: read-only file system, open '/tmp/o3'", '/tmp/o3'],
    ['python', "OSError: [Errno 30] Read-only file system: '/tmp/o4'", '/tmp/o4'],
    ['git', 'error: could not write config file .git/config: Device or resource busy', '.git/config'],
    ['no path', 'write failed: Read-only file system', undefined],
  ])('the path of a %s message', (_name, line, path) => {
    expect(refusedPath(line)).toBe(path);
  });

  it.each([
    ['a write outside the tree', 'sh: 1: cannot create /home/u/x: Read-only file system', BOX, ['write outside the working tree: /home/u/x; write inside it or in $TMPDIR']],
    ['the same path twice is one refusal', 'touch: cannot touch \'/a\': Read-only file system\ntouch: cannot touch \'/a\': Read-only file system', BOX, ['outside the working tree: /a']],
    ['a git config write', 'error: could not write config file .git/config: Device or resource busy', BOX, ['protected path of the repository: .git/config stays read-only (its settings run commands']],
    ['EBUSY elsewhere is not the sandbox', 'umount: /mnt: Device or resource busy', BOX, []],
    ['read-only mode, inside the tree', "touch: cannot touch './f': Read-only file system", box({ mode: 'read-only' }), ['the sandbox (read-only) refused a write: ./f']],
    ['a refused connection', 'connect ECONNREFUSED 127.0.0.1:8080', BOX, ['the sandbox has no network']],
    ['a name lookup', 'curl: (6) Could not resolve host: example.com', BOX, ['the sandbox has no network']],
    ['a refused connection with the network allowed is not the sandbox', 'connect ECONNREFUSED 127.0.0.1:8080', box({ network: true }), []],
    ['nothing', 'all good\n[exit code 0]', BOX, []],
  ])('%s', (_name, output, sandbox, messages) => {
    const found = sandboxRefusals(output, sandbox).map((r) => r.message);
    expect(found).toHaveLength(messages.length);
    messages.forEach((m, i) => expect(found[i]).toContain(m));
  });

  it('reports at most five per command', () => {
    const output = Array.from({ length: 50 }, (_, i) => `touch: cannot touch '/x${i}': Read-only file system`).join('\n');
    expect(sandboxRefusals(output, BOX)).toHaveLength(5);
  });
});

describe('what is writable', () => {
  it.each([
    ['a repository root', 'workspace-write', '/w/repo', { gitDir: '/w/repo/.git', commonDir: '/w/repo/.git', workTree: '/w/repo', dotGit: 'dir', worktrees: [] }, ['/w/repo']],
    [
      'a subdirectory: the git directory above is writable too',
      'workspace-write',
      '/w/repo/sub',
      { gitDir: '/w/repo/.git', commonDir: '/w/repo/.git', workTree: '/w/repo', dotGit: 'dir', worktrees: [] },
      ['/w/repo/sub', '/w/repo/.git'],
    ],
    [
      'a linked worktree: its git directory and the common one',
      'workspace-write',
      '/w/wt',
      { gitDir: '/w/main/.git/worktrees/wt', commonDir: '/w/main/.git', workTree: '/w/wt', dotGit: 'file', worktrees: ['/w/main/.git/worktrees/wt'] },
      ['/w/wt', '/w/main/.git/worktrees/wt', '/w/main/.git'],
    ],
    ['not a repository', 'workspace-write', '/w/plain', null, ['/w/plain']],
    ['read-only', 'read-only', '/w/repo', { gitDir: '/w/repo/.git', commonDir: '/w/repo/.git', workTree: '/w/repo', dotGit: 'dir', worktrees: [] }, []],
  ] as const)('%s', (_name, mode, cwd, git, writable) => {
    expect(writableLayout(mode, cwd, git).writable).toEqual(writable);
  });

  it('describes a policy for doctor', () => {
    expect(describePolicy({ mode: 'off', network: true })).toBe('off');
    expect(describePolicy({ mode: 'read-only', network: false })).toBe('read-only, no network');
    expect(describePolicy({ mode: 'workspace-write', network: true })).toBe('workspace-write, network allowed');
  });
});

describe('prepareSandbox', () => {
  it('off needs nothing', async () => {
    expect(await prepareSandbox({ mode: 'off', network: false }, { cwd: '/', env: { PATH: '' } })).toBeNull();
  });

  it.each([
    ['linux without bwrap', 'linux', /--sandbox workspace-write: bwrap is not on PATH; install bubblewrap \(apt-get install bubblewrap.*--sandbox off/],
    ['macOS without sandbox-exec', 'darwin', /sandbox-exec is not on PATH; sandbox-exec ships with macOS/],
    ['another OS', 'win32', /no sandbox is available on win32/],
  ] as const)('%s: exit 2 naming the fix', async (_name, platform, message) => {
    const err = await prepareSandbox({ mode: 'workspace-write', network: false }, { cwd: '/', env: { PATH: '/nonexistent' }, platform }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'sandbox_unavailable', status: 'invalid_input' });
    expect((err as Error).message).toMatch(message);
  });
});

describe('configuration', () => {
  it.each([
    ['default', {}, { mode: 'off', network: false }],
    ['a mode', { sandbox: 'read-only' }, { mode: 'read-only', network: false }],
    ['the block', { sandbox: { mode: 'workspace-write', network: true } }, { mode: 'workspace-write', network: true }],
  ])('%s', (_name, raw, expected) => {
    expect(NaviConfigSchema.parse(raw).sandbox).toEqual({ ...expected, env: DEFAULT_SANDBOX_ENV });
  });

  it.each([
    ['an unknown mode', { sandbox: 'strict' }, /sandbox\.mode.*must be one of "off", "workspace-write", "read-only"/],
    ['a number', { sandbox: 5 }, /sandbox: must be an object/],
    ['a misspelt key', { sandbox: { netwrok: true } }, /netwrok/],
  ])('%s is exit 2 naming the key', (_name, raw, message) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-sbx-cfg-'));
    try {
      fs.writeFileSync(path.join(dir, '.nav-config.json'), JSON.stringify(raw));
      expect(() => loadConfig({ cwd: dir, env: {}, home: dir })).toThrow(message);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('layers merge: a file mode, a task network, a flag mode', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-sbx-cfg-'));
    try {
      fs.writeFileSync(path.join(dir, '.nav-config.json'), JSON.stringify({ sandbox: 'workspace-write' }));
      const parsed = parseTaskText('prompt: p\nsandbox: { network: true }\n', { display: 'tasks/t.yaml' });
      expect(parsed.problems).toEqual([]);
      const override = parsed.task && taskSandboxOverride(parsed.task);
      expect(override).toBeDefined();
      const overrides = override ? [override] : [];
      expect(loadConfig({ cwd: dir, env: {}, home: dir, loopOverrides: overrides }).config.sandbox).toMatchObject({ mode: 'workspace-write', network: true });
      expect(loadConfig({ cwd: dir, env: {}, home: dir, loopOverrides: overrides, flags: [{ flag: '--sandbox', key: 'sandbox.mode', value: 'read-only' }] }).config.sandbox).toMatchObject({
        mode: 'read-only',
        network: true,
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad task sandbox is a task problem naming the key', () => {
    const parsed = parseTaskText('prompt: p\nsandbox: everything\n', { display: 'tasks/t.yaml' });
    expect(parsed.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([expect.stringMatching(/^sandbox\.mode: .*must be one of "off", "workspace-write", "read-only"/)]);
  });
});
