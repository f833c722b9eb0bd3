/**
 * A task's checks and ticket command under `--sandbox` (issue 35 item 7): they run files the
 * model can rewrite, so they run in the model's sandbox. Each test is the attack as a model
 * would make it — rewrite the script a check runs (`sh check.sh`, `npm test` → package.json,
 * the ticket's script) to write a marker outside the tree — through the built CLI, the fake
 * Ollama and a real bubblewrap: the marker never appears and the check's output says why.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { listenOnLoopback } from '../support/ports.js';
import { outsideDir } from './outside.js';
import type { FakeTurn } from '../support/fake-ollama.js';
import { LONG_SCENARIO_TIMEOUT_MS } from '../scenario/helpers.js';
import { describeRun, eventsOf, expectLoopStream, git, loopRepo, resultOf, say, scenario, script, tc, type Scenario } from '../loop-scenario/helpers.js';

/** The loop repository with `task.yaml` replaced by `lines` and `files` added, all committed. */
function taskRepo(s: Scenario, lines: readonly string[], files: Record<string, string> = {}): void {
  loopRepo(s.cwd);
  fs.writeFileSync(path.join(s.cwd, 'task.yaml'), `${['name: reach', 'prompt: "Make the check pass."', 'loop: { max_iterations: 1 }', ...lines].join('\n')}\n`);
  for (const [rel, content] of Object.entries(files)) fs.writeFileSync(path.join(s.cwd, rel), content);
  git(s.cwd, 'add', '-A');
  git(s.cwd, 'commit', '-qm', 'the task');
}

/** One iteration: the model writes `file` with `content`, then answers. */
function rewrite(file: string, content: string): FakeTurn[] {
  return [tc('write_file', { path: file, content }), say(`I rewrote ${file}.`)];
}

/** The stored output tails of the run's first iteration, by check name (`runs show -o json`). */
async function outputTails(s: Scenario, runId: string): Promise<Record<string, string>> {
  const shown = await s.navi(['runs', 'show', runId, '-o', 'json']);
  expect(shown.code, describeRun(shown)).toBe(0);
  const checks = (JSON.parse(shown.stdout) as { iterations: Array<{ evidence: { checks: Array<{ name: string; output_tail: string }> } }> })
    .iterations[0]?.evidence.checks ?? [];
  return Object.fromEntries(checks.map((c) => [c.name, c.output_tail]));
}

forEachBackend(
  (backend) => {
    describe('checks and the ticket command under --sandbox', () => {
      it(
        'a check running `sh check.sh`, which the model rewrote to write outside the tree: the write is refused and the check says why',
        async () => {
          const marker = path.join(outsideDir(), 'check-marker');
          const s = await scenario(backend, script(rewrite('check.sh', `echo "$HOME" > "${marker}"\n`)));
          taskRepo(s, ['checks:', '  - { name: t, run: "sh check.sh", timeout_s: 60 }'], { 'check.sh': 'exit 0\n' });
          const run = await s.navi(['loop', 'task.yaml', '--sandbox', 'workspace-write', '-o', 'stream-json']);
          expect(run.code, describeRun(run)).toBe(3);
          expect(fs.existsSync(marker)).toBe(false);
          const events = expectLoopStream(run);
          const warnings = eventsOf(events, 'warning').filter((w) => w.code === 'sandbox_refused');
          expect(warnings.map((w) => w.message)).toEqual([`check "t": the sandbox refused a write outside the working tree: ${marker}; write inside it or in $TMPDIR`]);
          const tails = await outputTails(s, String(resultOf(run).run_id));
          expect(tails.t).toContain(`[the sandbox refused a write outside the working tree: ${marker}; write inside it or in $TMPDIR]`);
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );

      it(
        '`npm test` after the model rewrote package.json\'s test script: the script runs inside, its write outside is refused',
        async () => {
          const marker = path.join(outsideDir(), 'npm-marker');
          const pkg = JSON.stringify({ type: 'module', private: true, scripts: { test: `echo pwned > "${marker}"` } });
          const s = await scenario(backend, script(rewrite('package.json', pkg)));
          taskRepo(s, ['checks:', '  - { name: npm, run: "npm test", timeout_s: 120 }'], {
            'package.json': JSON.stringify({ type: 'module', private: true, scripts: { test: 'node --test' } }),
          });
          const run = await s.navi(['loop', 'task.yaml', '--sandbox', 'workspace-write', '-o', 'stream-json']);
          expect(run.code, describeRun(run)).toBe(3);
          expect(fs.existsSync(marker)).toBe(false);
          const tails = await outputTails(s, String(resultOf(run).run_id));
          expect(tails.npm).toContain(`the sandbox refused a write outside the working tree: ${marker}`);
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );

      it(
        'the ticket command, whose script the model rewrote: it runs inside too',
        async () => {
          const marker = path.join(outsideDir(), 'ticket-marker');
          const s = await scenario(backend, script(rewrite('ticket.sh', `echo closed > "${marker}"\n`)));
          taskRepo(s, ['checks:', '  - { name: t, run: "true", timeout_s: 60 }', 'ticket: { run: "sh ticket.sh" }'], { 'ticket.sh': 'exit 1\n' });
          const run = await s.navi(['loop', 'task.yaml', '--sandbox', 'workspace-write', '-o', 'stream-json']);
          expect(fs.existsSync(marker)).toBe(false);
          const events = expectLoopStream(run);
          const status = eventsOf(events, 'iteration_status')[0] as { evidence: { ticket_exit_code?: number } } | undefined;
          expect(status?.evidence.ticket_exit_code, describeRun(run)).toBe(2);
          const warnings = eventsOf(events, 'warning').filter((w) => w.code === 'sandbox_refused');
          expect(warnings.map((w) => w.message)).toEqual([`the ticket command: the sandbox refused a write outside the working tree: ${marker}; write inside it or in $TMPDIR`]);
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );

      it(
        'network: a check reaches the network only when the task says sandbox: { mode: workspace-write, network: true }',
        async () => {
          let accepted = 0;
          const server = net.createServer((socket) => {
            accepted += 1;
            socket.on('error', () => undefined);
            socket.end('hello\n');
          });
          const port = await listenOnLoopback(server);
          try {
            const js = `require('net').connect(${port},'127.0.0.1').on('connect',()=>process.exit(0)).on('error',(e)=>{console.error(e.message);process.exit(1)})`;
            const check = ['checks:', `  - { name: net, run: ${JSON.stringify(`"${process.execPath}" -e "${js}"`)}, timeout_s: 60 }`];
            for (const network of [false, true]) {
              const s = await scenario(backend, script([say('Nothing to do.')]));
              taskRepo(s, [...check, `sandbox: { mode: workspace-write, network: ${String(network)} }`]);
              const run = await s.navi(['loop', 'task.yaml', '-o', 'stream-json']);
              const status = eventsOf(expectLoopStream(run), 'iteration_status')[0] as { evidence: { checks: Array<{ exit_code: number }> } } | undefined;
              expect(status?.evidence.checks[0]?.exit_code, describeRun(run)).toBe(network ? 0 : 1);
              expect(accepted).toBe(network ? 1 : 0);
              if (!network) {
                const tails = await outputTails(s, String(resultOf(run).run_id));
                expect(tails.net).toContain('[the sandbox has no network (sandbox.network is false): connections and name lookups fail]');
              }
            }
          } finally {
            await new Promise((resolve) => server.close(resolve));
          }
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );
    });
  },
);
