/**
 * `--sandbox` as a user meets it (issue 22): the built CLI, the fake Ollama scripted to have the
 * shell tool run a script the model wrote, a real bubblewrap. The script writes outside the tree,
 * connects to a port a server of this test listens on, and writes inside: only the last works,
 * and the tool result says why the others failed.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { listenOnLoopback } from '../support/ports.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectValidStream, scenario, tempDir } from '../scenario/helpers.js';

/** A server on 127.0.0.1 that counts the connections it accepted. */
interface Listener {
  port: number;
  accepted: () => number;
  close: () => Promise<void>;
}

async function listen(): Promise<Listener> {
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    socket.on('error', () => undefined); // the client exits at once: a reset is expected
    socket.end('hello\n');
  });
  const port = await listenOnLoopback(server);
  return { port, accepted: () => accepted, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** A node one-liner that connects to `port` and says whether it could. */
function connectCommand(port: number): string {
  const js = `require('net').connect(${port},'127.0.0.1').on('connect',()=>{console.log('connected');process.exit(0)}).on('error',(e)=>{console.error(e.message);process.exit(1)})`;
  return `"${process.execPath}" -e "${js}"`;
}

/** The model writes a script, runs it with the shell tool, then answers. */
function scriptRun(script: string): FakeScript {
  return {
    turns: [
      { tool_calls: [{ name: 'write_file', arguments: { path: 'job.sh', content: script } }] },
      { tool_calls: [{ name: 'shell', arguments: { command: 'sh job.sh' } }] },
      { content: 'done' },
    ],
    on_exhausted: 'error',
  };
}

/** One shell command, then an answer. */
function commandRun(command: string): FakeScript {
  return { turns: [{ tool_calls: [{ name: 'shell', arguments: { command } }] }, { content: 'done' }], on_exhausted: 'error' };
}

function shellOutput(events: readonly Record<string, unknown>[]): string {
  const call = eventsOf(events, 'tool_call').find((c) => c.name === 'shell');
  return typeof call?.output === 'string' ? call.output : '';
}

forEachBackend(
  (backend) => {
    describe('--sandbox', () => {
      let server: Listener;
      beforeEach(async () => {
        server = await listen();
      });
      afterEach(() => server.close());

      it(
        'workspace-write: a script writes outside the tree, connects to a local port and writes inside; only the last succeeds and the result says why',
        async () => {
          const outside = tempDir('outside');
          const escaped = path.join(outside, 'escaped.txt');
          const s = await scenario(
            backend,
            scriptRun([`echo leak > "${escaped}"`, connectCommand(server.port), 'echo kept > inside.txt', 'echo "tmp=$TMPDIR"', ''].join('\n')),
          );
          // Spawned: the sandbox's private temp directory lives as long as navi's process, which this checks is gone.
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'run the job'], { spawn: true });
          expect(run.code, describeRun(run)).toBe(0);
          const events = expectValidStream(run);
          expect(eventsOf(events, 'run_started')[0]).toMatchObject({ sandbox: 'workspace-write', sandbox_network: false });
          expect(fs.existsSync(escaped)).toBe(false);
          expect(server.accepted()).toBe(0);
          expect(fs.readFileSync(path.join(s.cwd, 'inside.txt'), 'utf8')).toBe('kept\n');
          const output = shellOutput(events);
          // The outside directory is under /tmp, which the sandbox hides: it is not even there inside.
          expect(output).toContain(`the sandbox hides /tmp (each command gets an empty one: no socket there leads out): ${escaped} is not there inside`);
          expect(output).toContain('the sandbox has no network');
          expect(output).not.toContain('connected');
          const warnings = eventsOf(events, 'warning').filter((w) => w.code === 'sandbox_refused');
          expect(warnings.map((w) => w.message)).toEqual([
            expect.stringContaining(`${escaped} is not there inside`),
            expect.stringContaining('no network'),
          ]);
          // The private temp directory is gone with navi.
          const tmp = /tmp=(\S+)/.exec(output)?.[1];
          expect(tmp).toMatch(/navi-sandbox-/);
          expect(fs.existsSync(tmp ?? '/')).toBe(false);
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'a git commit inside the tree works; the git config stays read-only',
        async () => {
          const s = await scenario(
            backend,
            commandRun('echo one > a.txt && git add a.txt && git commit -q -m "first" && git log --format=%s && git config user.name intruder'),
          );
          const git = (...args: string[]): string => execFileSync('git', args, { cwd: s.cwd, encoding: 'utf8' });
          git('init', '-q');
          git('config', 'user.email', 'navi@example.com');
          git('config', 'user.name', 'navi');
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'commit']);
          expect(run.code, describeRun(run)).toBe(0);
          const output = shellOutput(expectValidStream(run));
          expect(git('log', '--format=%s').trim()).toBe('first');
          expect(git('config', 'user.name').trim()).toBe('navi');
          expect(output).toContain('the sandbox refused a write to a protected path of the repository');
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'read-only: a write inside the tree is refused too; $TMPDIR still works',
        async () => {
          const s = await scenario(backend, commandRun('echo x > "$TMPDIR/scratch" && cat "$TMPDIR/scratch" && echo y > in-tree.txt'));
          const run = await s.navi(['run', '--sandbox', 'read-only', '-o', 'stream-json', 'try to write']);
          expect(run.code, describeRun(run)).toBe(0);
          const events = expectValidStream(run);
          expect(eventsOf(events, 'run_started')[0]).toMatchObject({ sandbox: 'read-only' });
          expect(fs.existsSync(path.join(s.cwd, 'in-tree.txt'))).toBe(false);
          const output = shellOutput(events);
          expect(output).toMatch(/^x$/m);
          expect(output).toContain('the sandbox (read-only) refused a write');
          expect(eventsOf(events, 'tool_call').find((c) => c.name === 'shell')?.ok).toBe(false);
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'sandbox.network: true in the config lets the connection through',
        async () => {
          const s = await scenario(backend, commandRun(connectCommand(server.port)));
          fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ sandbox: { mode: 'workspace-write', network: true } }));
          const run = await s.navi(['run', '-o', 'stream-json', 'connect']);
          expect(run.code, describeRun(run)).toBe(0);
          const events = expectValidStream(run);
          expect(eventsOf(events, 'run_started')[0]).toMatchObject({ sandbox: 'workspace-write', sandbox_network: true });
          expect(shellOutput(events)).toContain('connected');
          expect(server.accepted()).toBe(1);
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'a user tool runs in the sandbox too: its write outside the tree fails and says why, its write inside works',
        async () => {
          const outside = tempDir('outside');
          const escaped = path.join(outside, 'tool-escaped.txt');
          const s = await scenario(backend, {
            turns: [
              {
                tool_calls: [
                  { name: 'put', arguments: { file: 'tool-inside.txt' } },
                  { name: 'put', arguments: { file: escaped } },
                ],
              },
              { content: 'done' },
            ],
            on_exhausted: 'error',
          });
          fs.mkdirSync(path.join(s.cwd, 'tools'));
          fs.writeFileSync(
            path.join(s.cwd, 'tools', 'put.mjs'),
            [
              "import fs from 'node:fs';",
              "import path from 'node:path';",
              "export const name = 'put';",
              "export const description = 'Write a file';",
              "export const parameters = { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] };",
              "export function execute(args, ctx) { fs.writeFileSync(path.resolve(ctx.cwd, args.file), 'x'); return 'wrote ' + args.file; }",
              '',
            ].join('\n'),
          );
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'put files']);
          expect(run.code, describeRun(run)).toBe(0);
          const calls = eventsOf(expectValidStream(run), 'tool_call').filter((c) => c.name === 'put');
          expect(calls.map((c) => c.ok)).toEqual([true, false]);
          expect(fs.readFileSync(path.join(s.cwd, 'tool-inside.txt'), 'utf8')).toBe('x');
          expect(fs.existsSync(escaped)).toBe(false);
          expect(calls[1]?.output).toContain(`the sandbox hides /tmp (each command gets an empty one: no socket there leads out): ${escaped} is not there inside`);
        },
        SCENARIO_TIMEOUT_MS,
      );

      it(
        'bwrap missing from PATH: exit 2 naming it and the fix, before any model call',
        async () => {
          const s = await scenario(backend, commandRun('true'));
          const run = await s.navi(['run', '--sandbox', 'workspace-write', 'anything'], { env: { PATH: tempDir('empty-path') } });
          expect(run.code, describeRun(run)).toBe(2);
          expect(run.stderr).toMatch(/--sandbox workspace-write: bwrap is not on PATH; install bubblewrap \(apt-get install bubblewrap/);
          expect(run.stderr).not.toMatch(/\n\s+at /);
          expect(s.chats()).toEqual([]);
        },
        SCENARIO_TIMEOUT_MS,
      );
    });
  },
);
