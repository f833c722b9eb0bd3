/**
 * Issue 11, bugs 3 and 4: what `navi` does with arguments but no command (`navi "prompt"` is
 * `navi run`, here against the model), and piped stdin beside a prompt argument (the argument is
 * the instruction, stdin the material). The cases that only parse — `navi -p "prompt"` copied
 * from claude/gemini is exit 2, never help and exit 0; options alone; a mistyped command; `navi`
 * alone prints help — run in process: test/unit/cli-parsing.unit.test.ts.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CLI_PATH } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, requestMessages, resultOf, scenario } from './helpers.js';

const ANSWER: FakeScript = { turns: [{ content: 'Looks fine.' }], on_exhausted: 'error' };

/** The first user message of the first chat request. */
function firstUserMessage(s: Awaited<ReturnType<typeof scenario>>): string {
  const user = requestMessages(s.chats()[0]).find((m) => m.role === 'user');
  return String(user?.content);
}

forEachBackend(
  (backend) => {
    describe('navi with no command', () => {
      it('`navi "prompt"` runs it like `navi run "prompt"`, options before and after included', async () => {
        const s = await scenario(backend, { turns: [{ content: 'Looks fine.' }, { content: 'Still fine.' }], on_exhausted: 'error' });
        const run = await s.navi(['review the config']);
        expect(run.code, describeRun(run)).toBe(0);
        expect(run.stdout).toBe('Looks fine.\n');
        expect(firstUserMessage(s)).toBe('review the config');
        const json = await s.navi(['-o', 'json', 'review', 'it', 'again', '--no-loop']);
        expect(json.code, describeRun(json)).toBe(0);
        expect(resultOf(json)).toMatchObject({ status: 'success', result: 'Still fine.' });
      }, SCENARIO_TIMEOUT_MS);
    });

    describe('piped stdin beside a prompt argument', () => {
      it('the argument is the instruction and stdin the material, fenced in <stdin>', async () => {
        const s = await scenario(backend, ANSWER);
        const diff = 'diff --git a/x b/x\n-old\n+new\n';
        const run = await s.navi(['run', 'review this'], { stdin: diff });
        expect(run.code, describeRun(run)).toBe(0);
        expect(firstUserMessage(s)).toBe('review this\n\n<stdin>\ndiff --git a/x b/x\n-old\n+new\n</stdin>');
      }, SCENARIO_TIMEOUT_MS);

      it('the shorthand does the same (`git diff | navi "review this"`); empty stdin adds nothing', async () => {
        const s = await scenario(backend, { turns: [{ content: 'a' }, { content: 'b' }], on_exhausted: 'error' });
        const run = await s.navi(['review this'], { stdin: 'some material' });
        expect(run.code, describeRun(run)).toBe(0);
        expect(firstUserMessage(s)).toBe('review this\n\n<stdin>\nsome material\n</stdin>');
        const empty = await s.navi(['run', 'just this'], { stdin: '' });
        expect(empty.code, describeRun(empty)).toBe(0);
        const second = requestMessages(s.chats()[1]).find((m) => m.role === 'user');
        expect(second?.content).toBe('just this');
      }, SCENARIO_TIMEOUT_MS);

      it('a pipe nobody writes to or closes does not hang a run that has its prompt: it goes on after the grace period and says so', async () => {
        const s = await scenario(backend, ANSWER);
        // A parent that hands navi a pipe and never writes or closes it (some CI runners, spawn()).
        const child = spawn(process.execPath, [CLI_PATH, '--ollama-host', s.fake.url, 'run', 'hello'], {
          cwd: s.cwd,
          env: s.env({ NAVI_STDIN_GRACE_MS: '300' }),
          stdio: ['pipe', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
        child.stdin.destroy();
        expect(code, stderr).toBe(0);
        expect(stdout).toBe('Looks fine.\n');
        expect(stderr).toMatch(/stdin: nothing arrived within 300 ms; running on the prompt argument alone/);
        expect(firstUserMessage(s)).toBe('hello');
      }, SCENARIO_TIMEOUT_MS);
    });
  },
);
