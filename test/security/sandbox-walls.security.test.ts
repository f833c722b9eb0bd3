/**
 * The sandbox's walls as an attacker tries them (issue 35, items 6, 8, 9): each attack is a
 * command the scripted model writes and runs with the shell tool under `--sandbox`, through the
 * built CLI and a real bubblewrap. Every one of them worked before: git's `commondir` pointed at
 * a config of the command's making (navi's own `git status` then ran its filter outside, the
 * user's next one its fsmonitor), a tmux server, PostgreSQL and another navi's PGlite socket
 * reached through Unix sockets, and the command's environment held navi's secrets.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectValidStream, scenario, tempDir, until } from '../scenario/helpers.js';
import { FIXED, expectExit, expectLoopStream, git, loopRepo, say, script, tc } from '../loop-scenario/helpers.js';

const LOOP_TIMEOUT_MS = 90_000;

/** The model writes `script` to job.sh, runs it, then answers. */
function scriptRun(body: string): FakeScript {
  return {
    turns: [tc('write_file', { path: 'job.sh', content: body }), tc('shell', { command: 'sh job.sh' }), say('done')],
    on_exhausted: 'error',
  };
}

function shellOutput(events: readonly Record<string, unknown>[]): string {
  return eventsOf(events, 'tool_call')
    .filter((c) => c.name === 'shell')
    .map((c) => (typeof c.output === 'string' ? c.output : ''))
    .join('\n');
}

/**
 * A second git directory with a config that runs commands, then `.git/commondir` pointed at it:
 * git would read that config (and the attributes naming its filter) from then on.
 */
function commondirAttack(filterMarker: string, fsmonitorMarker: string): string {
  return [
    'mkdir -p evil',
    'cp -r .git/objects .git/refs .git/HEAD evil/',
    `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tfsmonitor = "touch ${fsmonitorMarker}; echo"\\n[filter "x"]\\n\\tclean = "touch ${filterMarker}; cat"\\n' > evil/config`,
    "echo '* filter=x' > .gitattributes",
    'echo "$PWD/evil" > .git/commondir',
    'echo "commondir written: $?"',
    // Moving the git directory's parts aside to plant fresh ones.
    'mv .git/objects .git/objects-away',
    // The other control paths, some of which did not exist either.
    'echo "[core]" > .git/config.worktree; echo /x > .git/objects/info/alternates; echo x > .git/info/attributes',
    '',
  ].join('\n');
}

forEachBackend(
  (backend) => {
    describe('the sandbox, attacked', () => {
      it(
        'git: a command cannot repoint .git/commondir; navi\'s own git status runs no filter, the user\'s next git status no fsmonitor',
        async () => {
          const markers = tempDir('markers');
          const filterRan = path.join(markers, 'FILTER_RAN');
          const fsmonitorRan = path.join(markers, 'FSMONITOR_RAN');
          const s = await scenario(
            backend,
            script([
              tc('write_file', { path: 'attack.sh', content: commondirAttack(filterRan, fsmonitorRan) }),
              tc('shell', { command: 'sh attack.sh' }),
              // Same size as before, newer mtime: git must read the file (through the clean filter) to tell.
              tc('write_file', { path: 'math.js', content: FIXED }),
              say('I changed math.js.'),
            ]),
          );
          loopRepo(s.cwd, { loop: '{ max_iterations: 1 }', extra: 'sandbox: workspace-write' });
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json'], { timeoutMs: LOOP_TIMEOUT_MS });
          expectExit(run, 3);
          const events = expectLoopStream(run);
          const output = shellOutput(events);
          expect(output).not.toContain('commondir written: 0');
          expect(output).toContain('the sandbox refused a write to a protected path of the repository: .git/commondir stays read-only');
          expect(output).toMatch(/mv: cannot move '\.git\/objects'.*Device or resource busy/);
          expect(output).toContain('the sandbox refused to move or remove .git/objects');
          // navi's own git status at the end of the iteration ran after the attack, and saw math.js changed.
          const evidence = eventsOf(events, 'iteration_status')[0]?.evidence as { git_repo: boolean; files_changed: string[] };
          expect(evidence.git_repo).toBe(true);
          expect(evidence.files_changed).toContain('math.js');
          expect(fs.existsSync(filterRan), 'navi ran the planted filter').toBe(false);
          // The user's own git, afterwards: the repository is its own, nothing planted runs.
          expect(fs.readFileSync(path.join(s.cwd, '.git', 'commondir'), 'utf8')).toBe('.\n');
          expect(fs.readFileSync(path.join(s.cwd, '.git', 'config.worktree'), 'utf8')).toBe('');
          expect(fs.readFileSync(path.join(s.cwd, '.git', 'objects', 'info', 'alternates'), 'utf8')).toBe('');
          expect(git(s.cwd, 'status', '--porcelain')).toContain(' M math.js');
          expect(git(s.cwd, 'rev-parse', '--path-format=absolute', '--git-common-dir').trim()).toBe(fs.realpathSync(path.join(s.cwd, '.git')));
          expect(fs.existsSync(fsmonitorRan), 'the user\'s git status ran the planted fsmonitor').toBe(false);
          expect(fs.existsSync(filterRan), 'the user\'s git status ran the planted filter').toBe(false);
        },
        LOOP_TIMEOUT_MS,
      );

      it(
        'git: a repository poisoned before navi started (fsmonitor, a filter named by .gitattributes, GIT_EXTERNAL_DIFF) makes navi\'s own git run nothing',
        async () => {
          const markers = tempDir('markers');
          const ran = (name: string): string => path.join(markers, name);
          const s = await scenario(backend, script([tc('write_file', { path: 'math.js', content: FIXED }), say('Changed math.js.')]));
          loopRepo(s.cwd, { loop: '{ max_iterations: 1 }' });
          fs.writeFileSync(path.join(s.cwd, '.gitattributes'), '* filter=evil diff=evil\n');
          git(s.cwd, 'config', 'core.fsmonitor', `touch ${ran('FSMONITOR')}; echo`);
          git(s.cwd, 'config', 'filter.evil.clean', `touch ${ran('CLEAN')}; cat`);
          git(s.cwd, 'config', 'filter.evil.smudge', `touch ${ran('SMUDGE')}; cat`);
          git(s.cwd, 'config', 'filter.evil.required', 'true');
          git(s.cwd, 'config', 'diff.evil.textconv', `sh -c 'touch ${ran('TEXTCONV')}'; cat`);
          // A process-based filter by another name, in a file the config includes.
          fs.writeFileSync(path.join(s.cwd, '.git', 'extra.conf'), `[filter "Other.Name"]\n\tprocess = touch ${ran('PROCESS')}\n`);
          git(s.cwd, 'config', 'include.path', 'extra.conf');
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json'], {
            timeoutMs: LOOP_TIMEOUT_MS,
            env: { GIT_EXTERNAL_DIFF: `sh -c 'touch ${ran('EXTERNAL')}'`, GIT_CONFIG_PARAMETERS: `'core.fsmonitor=touch ${ran('PARAMS')}'` },
          });
          expectExit(run, 3);
          const evidence = eventsOf(expectLoopStream(run), 'iteration_status')[0]?.evidence as { git_repo: boolean; files_changed: string[] };
          expect(evidence.git_repo).toBe(true);
          expect(evidence.files_changed).toContain('math.js');
          expect(fs.readdirSync(markers), 'a planted command ran').toEqual([]);
        },
        LOOP_TIMEOUT_MS,
      );

      it(
        "git: a submodule's config and .git file stay read-only, so the user's next git status in the superproject runs no fsmonitor; a commit in the submodule still works",
        async () => {
          const markers = tempDir('markers');
          const marker = path.join(markers, 'SUBMODULE_FSMONITOR');
          const source = tempDir('submodule-source');
          git(source, 'init', '-q');
          fs.writeFileSync(path.join(source, 'lib.txt'), 'lib\n');
          git(source, 'add', 'lib.txt');
          git(source, '-c', 'user.name=s', '-c', 'user.email=s@test', 'commit', '-qm', 'lib');
          const s = await scenario(
            backend,
            scriptRun(
              [
                `git -C sub config core.fsmonitor "touch ${marker}; echo"; echo "sub config: $?"`,
                // Where the .git file points decides which config git reads (here: the same place, so the fsmonitor above would still run).
                'echo "gitdir: $PWD/.git/modules/sub" > sub/.git; echo "sub .git: $?"',
                'echo more >> sub/lib.txt && git -C sub -c user.name=m -c user.email=m@test commit -qam more && echo "sub commit: $?"',
                '',
              ].join('\n'),
            ),
          );
          git(s.cwd, 'init', '-q');
          git(s.cwd, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', source, 'sub');
          git(s.cwd, '-c', 'user.name=u', '-c', 'user.email=u@test', 'commit', '-qm', 'with a submodule');
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'poison the submodule']);
          expect(run.code, describeRun(run)).toBe(0);
          const output = shellOutput(expectValidStream(run));
          expect(output).toMatch(/sub config: [1-9]/);
          expect(output).toMatch(/sub \.git: [1-9]/);
          expect(output).toContain('sub commit: 0');
          expect(git(s.cwd, 'status', '--porcelain')).toContain('sub');
          expect(fs.existsSync(marker), "the user's git status ran the submodule's planted fsmonitor").toBe(false);
          expect(git(path.join(s.cwd, 'sub'), 'log', '--format=%s', '-1').trim()).toBe('more');
        },
        SCENARIO_TIMEOUT_MS,
      );

      it.skipIf(process.getuid?.() !== 0)(
        'git: a repository owned by another user (a CI checkout) is protected all the same, and the loop still sees it',
        async () => {
          const markers = tempDir('markers');
          const filterRan = path.join(markers, 'FILTER_RAN');
          const s = await scenario(
            backend,
            script([
              tc('write_file', { path: 'attack.sh', content: commondirAttack(filterRan, path.join(markers, 'FSMONITOR_RAN')) }),
              tc('shell', { command: 'sh attack.sh' }),
              tc('write_file', { path: 'math.js', content: FIXED }),
              say('I changed math.js.'),
            ]),
          );
          loopRepo(s.cwd, { loop: '{ max_iterations: 1 }', extra: 'sandbox: workspace-write' });
          // git refuses a repository of another owner unless safe.directory says so; navi runs as root here.
          execFileSync('chown', ['-R', '65534:65534', s.cwd]);
          const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json'], { timeoutMs: LOOP_TIMEOUT_MS });
          expectExit(run, 3);
          const events = expectLoopStream(run);
          expect(shellOutput(events)).toContain('.git/commondir stays read-only');
          const evidence = eventsOf(events, 'iteration_status')[0]?.evidence as { git_repo: boolean; files_changed: string[] };
          expect(evidence.git_repo).toBe(true);
          expect(evidence.files_changed).toContain('math.js');
          expect(fs.readdirSync(markers)).toEqual([]);
          // What navi made in the git directory belongs to the repository's owner, not to root.
          expect(fs.statSync(path.join(s.cwd, '.git', 'commondir')).uid).toBe(65534);
        },
        LOOP_TIMEOUT_MS,
      );

      it(
        'tmux: with $TMUX set, a sandboxed tmux new-window or send-keys reaches no server outside',
        async () => {
          const sock = path.join(tempDir('tmux'), 'sock');
          execFileSync('tmux', ['-S', sock, 'new-session', '-d', '-s', 'victim', '-x', '80', '-y', '20', 'sh']);
          onTestFinished(() => {
            spawnSync('tmux', ['-S', sock, 'kill-server']);
          });
          const markers = tempDir('tmux-markers');
          const m = (name: string): string => path.join(markers, name);
          const s = await scenario(
            backend,
            scriptRun(
              [
                `tmux new-window "touch ${m('NEW_WINDOW')}"; echo "new-window: $?"`,
                `tmux send-keys -t victim "touch ${m('SEND_KEYS')}" Enter; echo "send-keys: $?"`,
                `tmux -S ${sock} send-keys -t victim "touch ${m('EXPLICIT')}" Enter; echo "explicit socket: $?"`,
                '',
              ].join('\n'),
            ),
          );
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'drive tmux'], {
            env: { TMUX: `${sock},1,0`, TMUX_PANE: '%0' },
          });
          expect(run.code, describeRun(run)).toBe(0);
          const output = shellOutput(expectValidStream(run));
          expect(output).toMatch(/new-window: [1-9]/);
          expect(output).toMatch(/send-keys: [1-9]/);
          expect(output).toMatch(/explicit socket: [1-9]/);
          // The server does what it is told in order: once the test's own keys ran, the command's would have.
          execFileSync('tmux', ['-S', sock, 'send-keys', '-t', 'victim', `touch ${m('SENTINEL')}`, 'Enter']);
          execFileSync('tmux', ['-S', sock, 'new-window', `touch ${m('SENTINEL2')}`]);
          await until(() => fs.existsSync(m('SENTINEL')) && fs.existsSync(m('SENTINEL2')), 20_000, 'the test\'s own tmux commands');
          expect(fs.readdirSync(markers).sort()).toEqual(['SENTINEL', 'SENTINEL2']);
        },
        SCENARIO_TIMEOUT_MS,
      );

      const psql = spawnSync('psql', ['--version']).status === 0;
      const pgSockets = ['/var/run/postgresql', '/run/postgresql'].filter((dir) => fs.existsSync(path.join(dir, '.s.PGSQL.5432')));
      const psqlAsUser = (dir: string, sql: string): string =>
        execFileSync('psql', ['-h', dir, '-U', 'postgres', '-d', 'postgres', '-Atc', sql], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      const pgReachable = psql && pgSockets.length > 0 && spawnSync('psql', ['-h', pgSockets[0] ?? '', '-U', 'postgres', '-d', 'postgres', '-c', 'select 1']).status === 0;

      it.skipIf(!pgReachable)(
        'PostgreSQL: psql over its Unix socket (/var/run/postgresql, /run/postgresql) cannot create a database',
        async () => {
          const name = `navi_pwned_${randomBytes(4).toString('hex')}`;
          onTestFinished(() => {
            spawnSync('psql', ['-h', pgSockets[0] ?? '', '-U', 'postgres', '-d', 'postgres', '-c', `drop database if exists ${name}`]);
          });
          const s = await scenario(
            backend,
            scriptRun(
              [
                `psql -h /var/run/postgresql -U postgres -d postgres -c 'create database ${name}'; echo "var/run: $?"`,
                `psql -h /run/postgresql -U postgres -d postgres -c 'create database ${name}'; echo "run: $?"`,
                '',
              ].join('\n'),
            ),
          );
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'create a database']);
          expect(run.code, describeRun(run)).toBe(0);
          const output = shellOutput(expectValidStream(run));
          expect(output).toMatch(/var\/run: [1-9]/);
          expect(output).toMatch(/\brun: [1-9]/);
          expect(psqlAsUser(pgSockets[0] ?? '', `select count(*) from pg_database where datname = '${name}'`).trim()).toBe('0');
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        "navi's data directories: its own (NAVI_DATA_DIR) and the default one, where another navi serves PGlite on a socket, are not there inside",
        async () => {
          const xdg = tempDir('xdg-data');
          const otherNavi = path.join(xdg, 'navi', 'pgdata');
          fs.mkdirSync(otherNavi, { recursive: true, mode: 0o700 });
          // Stands in for another navi process holding the default data directory (store/shared-pglite.ts).
          let accepted = 0;
          const server = net.createServer((socket) => {
            accepted += 1;
            socket.destroy();
          });
          const socketPath = path.join(otherNavi, 'navi.sock');
          await new Promise<void>((resolve) => server.listen(socketPath, resolve));
          onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
          const s = await scenario(backend, { turns: [], on_exhausted: 'error' });
          const own = s.db.env.NAVI_DATA_DIR;
          const js = `require("net").connect(${JSON.stringify(socketPath)}).on("connect",()=>{console.log("connected");process.exit(0)}).on("error",(e)=>{console.log("connect failed: "+e.code);process.exit(1)})`;
          // Written by the test, not the model: under read-only the file tools refuse every write.
          fs.writeFileSync(
            path.join(s.cwd, 'job.sh'),
            [
              `"${process.execPath}" -e '${js}'`,
              `echo "default entries: $(ls -A "${otherNavi}" | wc -l)"`,
              // An empty tmpfs over it: the directory is there, nothing in it.
              ...(own !== undefined ? [`echo "own entries: $(ls -A "${own}" | wc -l)"`] : []),
              '',
            ].join('\n'),
          );
          s.fake.setScript({ turns: [tc('shell', { command: 'sh job.sh' }), say('done')], on_exhausted: 'error' });
          const run = await s.navi(['run', '--sandbox', 'read-only', '-o', 'stream-json', 'look for sockets'], { env: { XDG_DATA_HOME: xdg } });
          expect(run.code, describeRun(run)).toBe(0);
          const output = shellOutput(expectValidStream(run));
          expect(output).toContain('connect failed: ENOENT');
          expect(output).not.toContain('connected');
          expect(output).toContain('default entries: 0');
          if (own !== undefined) {
            expect(fs.readdirSync(own).length, 'navi\'s own data directory is not empty outside').toBeGreaterThan(0);
            expect(output).toContain('own entries: 0');
          }
          expect(accepted).toBe(0);
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'the environment: no secrets, navi settings or socket pointers inside; PATH and HOME stay',
        async () => {
          const s = await scenario(backend, scriptRun('env | cut -d= -f1 | sort | sed "s/^/VAR /"\n'));
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'show env'], {
            env: {
              AWS_SECRET_ACCESS_KEY: 'aws-secret-value-1234',
              GITHUB_TOKEN: 'ghp_exampletoken1234',
              MY_DB_PASSWORD: 'hunter2hunter2',
              SERVICE_CREDENTIALS: 'creds-1234',
              NAVI_SERVE_TOKEN: 'navi-token-1234',
              SSH_AUTH_SOCK: '/tmp/ssh-x/agent.1',
              DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/0/bus',
              XDG_RUNTIME_DIR: '/run/user/0',
              TMUX: '/tmp/tmux-0/default,1,0',
              LANG_EXTRA: 'kept',
            },
          });
          expect(run.code, describeRun(run)).toBe(0);
          const names = [...shellOutput(expectValidStream(run)).matchAll(/^VAR (\S+)$/gm)].map((m) => m[1]);
          expect(names).toEqual(expect.arrayContaining(['PATH', 'HOME', 'LANG_EXTRA', 'TMPDIR']));
          for (const gone of ['AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'MY_DB_PASSWORD', 'SERVICE_CREDENTIALS', 'NAVI_SERVE_TOKEN', 'SSH_AUTH_SOCK', 'DBUS_SESSION_BUS_ADDRESS', 'XDG_RUNTIME_DIR', 'TMUX']) {
            expect(names, gone).not.toContain(gone);
          }
          expect(names.filter((n) => n?.startsWith('NAVI_') === true || n === 'DATABASE_URL')).toEqual([]);
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'sandbox.env in the config: include lets a named secret in, exclude keeps a variable out, inherit "none" passes only what is named',
        async () => {
          const s = await scenario(backend, scriptRun('env | cut -d= -f1 | sort | sed "s/^/VAR /"\n'));
          const env = { GITHUB_TOKEN: 'ghp_exampletoken1234', AWS_SECRET_ACCESS_KEY: 'aws-secret-value-1234', LANG_EXTRA: 'x', OTHER_SETTING: 'y' };
          const namesOf = (run: Awaited<ReturnType<typeof s.navi>>): Array<string | undefined> => {
            expect(run.code, describeRun(run)).toBe(0);
            return [...shellOutput(expectValidStream(run)).matchAll(/^VAR (\S+)$/gm)].map((m) => m[1]);
          };
          fs.writeFileSync(
            path.join(s.cwd, '.nav-config.json'),
            JSON.stringify({ sandbox: { mode: 'workspace-write', env: { include: ['GITHUB_*'], exclude: ['LANG_*'] } } }),
          );
          const first = namesOf(await s.navi(['run', '-o', 'stream-json', 'show env'], { env }));
          expect(first).toEqual(expect.arrayContaining(['GITHUB_TOKEN', 'OTHER_SETTING', 'PATH']));
          expect(first).not.toContain('LANG_EXTRA');
          expect(first).not.toContain('AWS_SECRET_ACCESS_KEY');

          s.fake.setScript(scriptRun('env | cut -d= -f1 | sort | sed "s/^/VAR /"\n'));
          fs.writeFileSync(
            path.join(s.cwd, '.nav-config.json'),
            JSON.stringify({ sandbox: { mode: 'workspace-write', env: { inherit: 'none', include: ['PATH', 'HOME'] } } }),
          );
          const second = namesOf(await s.navi(['run', '-o', 'stream-json', 'show env'], { env }));
          expect(second).toEqual(expect.arrayContaining(['PATH', 'HOME', 'TMPDIR']));
          for (const gone of ['OTHER_SETTING', 'LANG_EXTRA', 'GITHUB_TOKEN', 'CI']) expect(second, gone).not.toContain(gone);
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'ordinary git inside still works: add, commit, branch, checkout -b, stash, tag, and a commit in a linked worktree',
        async () => {
          const s = await scenario(
            backend,
            scriptRun(
              [
                'set -e',
                'echo one > a.txt && git add a.txt && git commit -qm first',
                'git branch side && git checkout -qb feature',
                'echo two >> a.txt && git stash -q && git stash pop -q && git commit -qam second',
                'git tag v1',
                'echo "all done"',
                '',
              ].join('\n'),
            ),
          );
          git(s.cwd, 'init', '-q');
          git(s.cwd, 'config', 'user.email', 'navi@example.com');
          git(s.cwd, 'config', 'user.name', 'navi');
          git(s.cwd, 'commit', '-q', '--allow-empty', '-m', 'root');
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'use git']);
          expect(run.code, describeRun(run)).toBe(0);
          expect(shellOutput(expectValidStream(run))).toContain('all done');
          expect(git(s.cwd, 'log', '--format=%s', 'feature').trim().split('\n')).toEqual(['second', 'first', 'root']);
          expect(git(s.cwd, 'rev-parse', 'v1').trim()).toBe(git(s.cwd, 'rev-parse', 'feature').trim());
          expect(git(s.cwd, 'branch', '--list', 'side').trim()).toBe('side');
          expect(git(s.cwd, 'stash', 'list').trim()).toBe('');

          // A linked worktree as navi's working directory: its git directory and the common one lie outside it.
          const linked = path.join(tempDir('linked'), 'wt');
          git(s.cwd, 'worktree', 'add', '-q', '-b', 'linked', linked);
          s.fake.setScript(scriptRun('set -e\necho three > b.txt && git add b.txt && git commit -qm third && git stash list && echo "linked done"\n'));
          const inLinked = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'commit in the worktree'], { cwd: linked });
          expect(inLinked.code, describeRun(inLinked)).toBe(0);
          expect(shellOutput(expectValidStream(inLinked))).toContain('linked done');
          expect(git(s.cwd, 'log', '--format=%s', '-1', 'linked').trim()).toBe('third');
          expect(git(linked, 'status', '--porcelain').trim()).toBe('?? job.sh');
        },
        SCENARIO_TIMEOUT_MS,
      );
    });
  },
);
