/**
 * The walls' pure rules (issue 35), one table each: what of a repository stays read-only and
 * pinned, the order of the mounts, the hidden directories, the environment filter, how navi's
 * own git is configured, and the refusal messages that name what was protected.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { parseTaskText } from '../../src/loop/task-file.js';
import { defaultDataDir } from '../../src/store/open.js';
import { bwrapMounts, type MountLayout } from '../../src/sandbox/bwrap-args.js';
import { droppedByDefault, envGlob, filterSandboxEnv } from '../../src/sandbox/env-filter.js';
import { gitControl, writableLayout, type GitFacts } from '../../src/sandbox/git-layout.js';
import { defaultDataRoot, hiddenDirs } from '../../src/sandbox/hidden-dirs.js';
import { DEFAULT_SANDBOX_ENV, type Sandbox } from '../../src/sandbox/modes.js';
import { blankedFilters, filterDriverNames, ownGitEnv, parseLocation } from '../../src/sandbox/own-git.js';
import { sandboxRefusals } from '../../src/sandbox/refusals.js';
import { seatbeltProfile } from '../../src/sandbox/seatbelt-profile.js';

const MAIN: GitFacts = { gitDir: '/w/repo/.git', commonDir: '/w/repo/.git', workTree: '/w/repo', dotGit: 'dir', worktrees: [] };
const LINKED: GitFacts = {
  gitDir: '/w/repo/.git/worktrees/wt',
  commonDir: '/w/repo/.git',
  workTree: '/w/wt',
  dotGit: 'file',
  worktrees: ['/w/repo/.git/worktrees/wt', '/w/repo/.git/worktrees/other'],
};

describe('git control paths', () => {
  it.each([
    [
      'an ordinary repository: the common directory\'s steering paths, commondir made "." when missing',
      MAIN,
      [
        ['/w/repo/.git/config', undefined],
        ['/w/repo/.git/config.worktree', ''],
        ['/w/repo/.git/hooks', undefined],
        ['/w/repo/.git/info', undefined],
        ['/w/repo/.git/commondir', '.\n'],
        ['/w/repo/.git/objects/info/alternates', ''],
      ],
      ['/w/repo/.git', '/w/repo/.git/objects', '/w/repo/.git/objects/info'],
    ],
    [
      "a linked worktree: every worktree's commondir, gitdir and config.worktree, and the tree's .git file",
      LINKED,
      [
        ['/w/repo/.git/config', undefined],
        ['/w/repo/.git/config.worktree', ''],
        ['/w/repo/.git/hooks', undefined],
        ['/w/repo/.git/info', undefined],
        ['/w/repo/.git/commondir', '.\n'],
        ['/w/repo/.git/objects/info/alternates', ''],
        ['/w/repo/.git/worktrees/wt/commondir', undefined],
        ['/w/repo/.git/worktrees/wt/gitdir', undefined],
        ['/w/repo/.git/worktrees/wt/config.worktree', ''],
        ['/w/repo/.git/worktrees/wt/info', undefined],
        ['/w/repo/.git/worktrees/other/commondir', undefined],
        ['/w/repo/.git/worktrees/other/gitdir', undefined],
        ['/w/repo/.git/worktrees/other/config.worktree', ''],
        ['/w/repo/.git/worktrees/other/info', undefined],
        ['/w/wt/.git', undefined],
      ],
      [
        '/w/repo/.git',
        '/w/repo/.git/objects',
        '/w/repo/.git/objects/info',
        '/w/repo/.git/worktrees',
        '/w/repo/.git/worktrees/other',
        '/w/repo/.git/worktrees/wt',
      ],
    ],
    [
      "submodules: each module's git directory like the common one, the path down to it pinned, the submodule's .git file",
      { ...MAIN, modules: ['/w/repo/.git/modules/a/b'], submoduleDotGits: ['/w/repo/a/b/.git'] },
      [
        ['/w/repo/.git/config', undefined],
        ['/w/repo/.git/config.worktree', ''],
        ['/w/repo/.git/hooks', undefined],
        ['/w/repo/.git/info', undefined],
        ['/w/repo/.git/commondir', '.\n'],
        ['/w/repo/.git/objects/info/alternates', ''],
        ['/w/repo/.git/modules/a/b/config', undefined],
        ['/w/repo/.git/modules/a/b/config.worktree', ''],
        ['/w/repo/.git/modules/a/b/hooks', undefined],
        ['/w/repo/.git/modules/a/b/info', undefined],
        ['/w/repo/.git/modules/a/b/commondir', '.\n'],
        ['/w/repo/.git/modules/a/b/objects/info/alternates', ''],
        ['/w/repo/a/b/.git', undefined],
      ],
      [
        '/w/repo/.git',
        '/w/repo/.git/modules',
        '/w/repo/.git/modules/a',
        '/w/repo/.git/modules/a/b',
        '/w/repo/.git/modules/a/b/objects',
        '/w/repo/.git/modules/a/b/objects/info',
        '/w/repo/.git/objects',
        '/w/repo/.git/objects/info',
      ],
    ],
  ])('%s', (_name, facts, control, pinned) => {
    const got = gitControl(facts);
    expect(got.control.map((c) => [c.path, c.placeholder])).toEqual(control);
    expect(got.pinned).toEqual(pinned);
  });

  it.each([
    ['workspace-write in a repository', 'workspace-write', '/w/repo', MAIN, 6, 3],
    ['workspace-write outside one: the tree only', 'workspace-write', '/w/plain', null, 0, 0],
    ['read-only: nothing is writable, nothing to protect', 'read-only', '/w/repo', MAIN, 0, 0],
  ] as const)('%s', (_name, mode, cwd, facts, protectedCount, pinnedCount) => {
    const layout = writableLayout(mode, cwd, facts);
    expect(layout.readOnlyInside).toHaveLength(protectedCount);
    expect(layout.pinned).toHaveLength(pinnedCount);
  });
});

const LAYOUT: MountLayout = {
  network: false,
  writable: ['/tmp/t/repo'],
  readOnlyInside: ['/tmp/t/repo/.git/config', '/tmp/t/repo/.git/objects/info/alternates'],
  pinned: ['/tmp/t/repo/.git', '/tmp/t/repo/.git/objects', '/tmp/t/repo/.git/objects/info'],
  hidden: ['/tmp', '/run', '/home/u/.local/share/navi'],
  keepVisible: [],
  tmpDir: '/tmp/navi-sandbox-1',
};

/** The mount operations after the fixed prefix, as `op path` strings. */
function mounts(layout: MountLayout, isDir: (p: string) => boolean = () => true): string[] {
  const args = bwrapMounts(layout, isDir);
  const out: string[] = [];
  for (let i = 6; i < args.length; i++) {
    const a = args[i] ?? '';
    if (a === '--tmpfs') out.push(`tmpfs ${args[++i]}`);
    else if (a === '--bind' || a === '--bind-try' || a === '--ro-bind-try') {
      out.push(`${a.replace(/^--/, '')} ${args[i + 1]}`);
      i += 2;
    }
  }
  return out;
}

describe('mount order', () => {
  it.each([
    [
      'a tree under /tmp: /tmp hidden first, the tree bound back over it, its git parts after',
      LAYOUT,
      [
        'tmpfs /tmp',
        'tmpfs /run',
        'bind /tmp/navi-sandbox-1',
        'bind /tmp/t/repo',
        'bind-try /tmp/t/repo/.git',
        'tmpfs /home/u/.local/share/navi',
        'bind-try /tmp/t/repo/.git/objects',
        'ro-bind-try /tmp/t/repo/.git/config',
        'bind-try /tmp/t/repo/.git/objects/info',
        'ro-bind-try /tmp/t/repo/.git/objects/info/alternates',
      ],
    ],
    [
      'a data directory inside the tree: hidden after the tree is bound',
      { ...LAYOUT, writable: ['/w/repo'], readOnlyInside: [], pinned: [], hidden: ['/w/repo/.navi-data'] },
      ['bind /tmp/navi-sandbox-1', 'bind /w/repo', 'tmpfs /w/repo/.navi-data'],
    ],
    [
      'the tree is a hidden directory itself: the bind wins',
      { ...LAYOUT, writable: ['/run/work'], readOnlyInside: [], pinned: [], hidden: ['/run/work', '/run'] },
      ['tmpfs /run', 'tmpfs /run/work', 'bind /tmp/navi-sandbox-1', 'bind /run/work'],
    ],
    [
      'read-only: the tree and resolv.conf bound back read-only over the hidden directories',
      { ...LAYOUT, writable: [], readOnlyInside: [], pinned: [], hidden: ['/tmp', '/run'], keepVisible: ['/tmp/t/repo', '/run/systemd/resolve/stub-resolv.conf'] },
      ['tmpfs /tmp', 'tmpfs /run', 'bind /tmp/navi-sandbox-1', 'ro-bind-try /tmp/t/repo', 'ro-bind-try /run/systemd/resolve/stub-resolv.conf'],
    ],
    [
      'a pinned directory that is writable too is bound once',
      { ...LAYOUT, writable: ['/w/sub', '/w/repo/.git'], readOnlyInside: [], pinned: ['/w/repo/.git'], hidden: [] },
      ['bind /tmp/navi-sandbox-1', 'bind /w/sub', 'bind /w/repo/.git'],
    ],
  ])('%s', (_name, layout, expected) => {
    expect(mounts(layout)).toEqual(expected);
  });

  it('a hidden directory that does not exist gets no tmpfs (bwrap could not mount one)', () => {
    expect(mounts({ ...LAYOUT, hidden: ['/tmp', '/run/user/0'] }, (p) => p !== '/run/user/0').filter((m) => m.startsWith('tmpfs'))).toEqual(['tmpfs /tmp']);
  });
});

describe('hidden directories', () => {
  it.each([
    ['the fixed ones, the temp directory and the data directories', {}, ['/data/pgdata'], '/var/tmp/me', ['/tmp', '/run', '/var/run', '/var/tmp/me', '/data/pgdata']],
    ['XDG_RUNTIME_DIR', { XDG_RUNTIME_DIR: '/run/user/1000' }, [], '/tmp', ['/tmp', '/run', '/var/run', '/run/user/1000']],
    ['a relative XDG_RUNTIME_DIR is ignored, as the XDG spec says', { XDG_RUNTIME_DIR: 'run' }, [], '/tmp', ['/tmp', '/run', '/var/run']],
  ])('%s', (_name, env, dataDirs, tmpdir, expected) => {
    expect(hiddenDirs({ env, dataDirs, tmpdir })).toEqual(expected);
  });

  it.each([
    ['NAVI_DATA_DIR', { NAVI_DATA_DIR: '/d/pg' }],
    ['XDG_DATA_HOME', { XDG_DATA_HOME: '/x/data', HOME: '/h' }],
    ['HOME', { HOME: '/h' }],
  ])("the default data directory is the store's (%s)", (_name, env) => {
    const store = defaultDataDir(env);
    const root = defaultDataRoot(env, '/h');
    expect(store === root || path.dirname(store) === root).toBe(true);
  });
});

describe('the environment inside', () => {
  const ENV = {
    PATH: '/bin',
    HOME: '/h',
    LANG: 'C',
    AWS_SECRET_ACCESS_KEY: 's',
    AWS_REGION: 'eu',
    GITHUB_TOKEN: 't',
    npm_config__authToken: 't',
    DB_PASSWORD: 'p',
    GOOGLE_APPLICATION_CREDENTIALS: '/c.json',
    DATABASE_URL: 'postgres://u:p@h/d',
    NAVI_DATA_DIR: '/d',
    NAVI_TOOL_RESULT: '/tmp/r.json',
    NAVI_NODE: '/usr/bin/node',
    TMUX: '/tmp/tmux-0/default,1,0',
    TMUX_PANE: '%1',
    SSH_AUTH_SOCK: '/tmp/ssh/agent',
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/0/bus',
    XDG_RUNTIME_DIR: '/run/user/0',
    DOCKER_HOST: 'unix:///run/docker.sock',
  };
  it.each([
    ['the default: secrets, navi settings and socket pointers out; navi\'s tool channel in', DEFAULT_SANDBOX_ENV, ['AWS_REGION', 'HOME', 'LANG', 'NAVI_NODE', 'NAVI_TOOL_RESULT', 'PATH']],
    [
      'include lets a named secret in; exclude wins over everything',
      { inherit: 'all', include: ['GITHUB_TOKEN', 'AWS_*'], exclude: ['AWS_REGION', 'LANG'] },
      ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'HOME', 'NAVI_NODE', 'NAVI_TOOL_RESULT', 'PATH'],
    ],
    ['inherit none: only what is named (and the tool channel)', { inherit: 'none', include: ['PATH', 'HOM?'], exclude: [] }, ['HOME', 'NAVI_NODE', 'NAVI_TOOL_RESULT', 'PATH']],
  ] as const)('%s', (_name, policy, kept) => {
    expect(Object.keys(filterSandboxEnv(ENV, policy)).sort()).toEqual([...kept].sort());
  });

  it.each([
    ['MY_API_KEY', true],
    ['apikey', true],
    ['Passwd_file', true],
    ['DBUS_STARTER_ADDRESS', true],
    ['NAVI_SERVE_TOKEN', true],
    ['NAVI_TOOL_ARGS', false],
    ['EDITOR', false],
    ['GIT_AUTHOR_NAME', false],
  ])('%s dropped by default: %s', (name, dropped) => {
    expect(droppedByDefault(name)).toBe(dropped);
  });

  it('globs: * and ? only, everything else literal', () => {
    expect(envGlob('AWS_*').test('AWS_X')).toBe(true);
    expect(envGlob('A.B').test('AxB')).toBe(false);
    expect(envGlob('A?').test('AB')).toBe(true);
  });
});

describe('sandbox.env in the config', () => {
  function load(raw: unknown): unknown {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-sbx-env-'));
    try {
      fs.writeFileSync(path.join(dir, '.nav-config.json'), JSON.stringify(raw));
      return loadConfig({ cwd: dir, env: {}, home: dir }).config.sandbox;
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it('defaults, and a given block', () => {
    expect(load({})).toMatchObject({ env: { inherit: 'all', include: [], exclude: [] } });
    expect(load({ sandbox: { mode: 'read-only', env: { inherit: 'none', include: ['PATH'] } } })).toMatchObject({
      mode: 'read-only',
      env: { inherit: 'none', include: ['PATH'], exclude: [] },
    });
  });

  it.each([
    ['an unknown inherit', { sandbox: { env: { inherit: 'some' } } }, /sandbox\.env\.inherit.*must be one of "all", "none"/],
    ['a name with "="', { sandbox: { env: { include: ['A=B'] } } }, /sandbox\.env\.include\[0\].*variable name or a glob/],
    ['not a list', { sandbox: { env: { exclude: 'AWS_*' } } }, /sandbox\.env\.exclude.*array/],
    ['a misspelt key', { sandbox: { env: { inherrit: 'all' } } }, /inherrit/],
  ])('%s is exit 2 naming the key', (_name, raw, message) => {
    let err: unknown;
    try {
      load(raw);
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ status: 'invalid_input' });
    expect((err as Error).message).toMatch(message);
  });

  it('a task file cannot set it (a worker takes task files from the job\'s repository)', () => {
    const parsed = parseTaskText('prompt: p\nsandbox: { mode: workspace-write, env: { inherit: all, include: ["*"] } }\n', { display: 'tasks/t.yaml' });
    expect(parsed.problems.map((p) => `${p.path}: ${p.message}`).join('\n')).toMatch(/env/);
  });
});

describe("navi's own git", () => {
  it('names the repository, drops inherited GIT_* and reads no system or global config', () => {
    const env = ownGitEnv(
      { PATH: '/bin', GIT_DIR: '/evil', GIT_EXTERNAL_DIFF: 'x', GIT_CONFIG_PARAMETERS: "'core.fsmonitor=x'" },
      { gitDir: '/w/.git/worktrees/a', commonDir: '/w/.git', workTree: '/a', prefix: '' },
      blankedFilters(['x']),
    );
    expect(env).toMatchObject({
      PATH: '/bin',
      GIT_DIR: '/w/.git/worktrees/a',
      GIT_COMMON_DIR: '/w/.git',
      GIT_WORK_TREE: '/a',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
    });
    expect(env.GIT_EXTERNAL_DIFF).toBeUndefined();
    expect(env.GIT_CONFIG_PARAMETERS).toBeUndefined();
    const config: Record<string, string | undefined> = Object.fromEntries(
      Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i): [string, string | undefined] => [env[`GIT_CONFIG_KEY_${i}`] ?? '', env[`GIT_CONFIG_VALUE_${i}`]]),
    );
    expect(config).toMatchObject({
      'core.fsmonitor': 'false',
      'core.hooksPath': '/dev/null',
      'diff.external': '',
      'filter.x.clean': '',
      'filter.x.smudge': '',
      'filter.x.process': '',
      'filter.x.required': 'false',
    });
  });

  it("its system configuration is navi's own file (safe.directory), or none", () => {
    expect(ownGitEnv({}, null, [], '/tmp/navi-git-1/config')).toMatchObject({ GIT_CONFIG_SYSTEM: '/tmp/navi-git-1/config', GIT_CONFIG_GLOBAL: '/dev/null' });
    expect(ownGitEnv({}, null, [], '/tmp/navi-git-1/config').GIT_CONFIG_NOSYSTEM).toBeUndefined();
    expect(ownGitEnv({ GIT_CONFIG_SYSTEM: '/etc/evil' }, null)).toMatchObject({ GIT_CONFIG_NOSYSTEM: '1' });
    expect(ownGitEnv({ GIT_CONFIG_SYSTEM: '/etc/evil' }, null).GIT_CONFIG_SYSTEM).toBeUndefined();
  });

  it.each([
    ['NUL-separated names', 'filter.lfs.clean\0filter.lfs.smudge\0filter.Other.Name.process\0', ['lfs', 'Other.Name']],
    ['none', '', []],
    ['a driver name with = in it', 'filter.a=b.clean\0', ['a=b']],
  ])('filter drivers from git config: %s', (_name, output, drivers) => {
    expect(filterDriverNames(output)).toEqual(drivers);
  });

  it.each([
    ['a repository root', '/r/.git\n/r/.git\n/r\n\n', { gitDir: '/r/.git', commonDir: '/r/.git', workTree: '/r', prefix: '' }],
    ['a subdirectory', '/r/.git\n/r/.git\n/r\nsub/\n', { gitDir: '/r/.git', commonDir: '/r/.git', workTree: '/r', prefix: 'sub/' }],
    ['a relative answer', '.git\n.git\n/r\n\n', null],
    ['too short', '/r/.git\n', null],
  ])('the location rev-parse gives: %s', (_name, stdout, location) => {
    expect(parseLocation(stdout)).toEqual(location);
  });
});

const BOX: Pick<Sandbox, 'mode' | 'cwd' | 'network' | 'readOnlyInside' | 'hidden' | 'pinned' | 'writable' | 'tmpDir'> = {
  mode: 'workspace-write',
  cwd: '/w/repo',
  network: false,
  readOnlyInside: writableLayout('workspace-write', '/w/repo', MAIN).readOnlyInside,
  pinned: writableLayout('workspace-write', '/w/repo', MAIN).pinned,
  writable: ['/w/repo'],
  hidden: ['/tmp', '/run'],
  tmpDir: '/tmp/navi-sandbox-1',
};

describe('refusals name what was protected', () => {
  it.each([
    ['commondir', 'sh: 1: cannot create .git/commondir: Read-only file system', 'protected path of the repository: .git/commondir stays read-only (it says where git reads the config from'],
    ['config.worktree is not config', 'sh: 1: cannot create .git/config.worktree: Read-only file system', '.git/config.worktree stays read-only'],
    ['a hook', "touch: cannot touch '.git/hooks/pre-commit': Read-only file system", '.git/hooks stays read-only (hooks run'],
    ['git\'s lock file of the config', 'error: could not lock config file .git/config: Read-only file system', '.git/config stays read-only'],
    ['alternates', "sh: 1: cannot create /w/repo/.git/objects/info/alternates: Read-only file system", '.git/objects/info/alternates stays read-only (it says where git reads objects from'],
    ['a pinned git directory moved', "mv: cannot move '.git/objects' to 'x': Device or resource busy", 'refused to move or remove .git/objects'],
    ['a path under hidden /tmp', "touch: cannot touch '/tmp/x/y': No such file or directory", 'the sandbox hides /tmp'],
    ['the private temp directory is not hidden', "cat: '/tmp/navi-sandbox-1/gone': No such file or directory", undefined],
    ['a missing file in the tree is no refusal', "cat: 'src/x.ts': No such file or directory", undefined],
  ])('%s', (_name, line, message) => {
    const found = sandboxRefusals(line, BOX).map((r) => r.message);
    if (message === undefined) expect(found).toEqual([]);
    else expect(found).toEqual([expect.stringContaining(message)]);
  });
});

describe('the macOS profile follows the same rules (written, not run here)', () => {
  const profile = seatbeltProfile({ ...BOX, network: false, tmpDir: '/private/tmp/navi-sandbox-1' });
  it.each([
    ['a missing control path is denied by name', '(literal "/w/repo/.git/commondir")'],
    ['a control directory and its contents', '(subpath "/w/repo/.git/hooks")'],
    ['a git directory cannot be renamed', '(deny file-write* (literal "/w/repo/.git") (literal "/w/repo/.git/objects")'],
    ['no Unix socket outside', '(deny network-outbound (remote unix-socket))'],
    ['the command\'s own sockets work', '(remote unix-socket (subpath "/w/repo"))'],
  ])('%s', (_name, part) => {
    expect(profile).toContain(part);
  });

  it('names resolve through mDNSResponder only when the network is allowed', () => {
    expect(profile).not.toContain('mDNSResponder');
    expect(seatbeltProfile({ ...BOX, network: true })).toContain('(path-literal "/private/var/run/mDNSResponder")');
  });
});
