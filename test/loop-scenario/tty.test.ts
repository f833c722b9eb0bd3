/**
 * A person at a terminal (SPEC §7): `navi loop --approval strict` inside a pseudo-terminal
 * (`script`) shows the approval menu after each NAVIGATOR_STATUS block and reads the answer —
 * Adjust with feedback, then Continue — and the feedback reaches the next iteration.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI_PATH } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { fixIteration, iterationMessages, lookIteration, loopRepo, scenario, script, type Scenario } from './helpers.js';

const hasScript = existsSync('/usr/bin/script');

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs navi in a pty; each time the screen shows `prompt`, types the next answer. */
function runInPty(s: Scenario, args: string[], answers: string[], prompt: RegExp): Promise<{ code: number; screen: string }> {
  const cmd = `stty cols 120; exec ${[process.execPath, CLI_PATH, '--ollama-host', s.fake.url, ...args].map(shellQuote).join(' ')}`;
  const env = { ...s.env({}, false), TERM: 'xterm' };
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', cmd, '/dev/null'], { cwd: s.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    let answered = 0;
    let seen = 0;
    const onData = (d: Buffer): void => {
      screen += d.toString();
      const prompts = screen.match(new RegExp(prompt.source, 'g'))?.length ?? 0;
      while (seen < prompts) {
        seen++;
        const answer = answers[answered++];
        // The prompt is written by a readline interface already reading the terminal: answer at once.
        if (answer !== undefined) child.stdin.write(answer);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    // Hang guard: far above the real time (a few CLI seconds, a loaded machine included).
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`navi in a pty did not finish; screen so far:\n${screen}`));
    }, 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, screen });
    });
  });
}

forEachBackend(
  (backend) => {
    describe.skipIf(!hasScript)('interactive approval in a pseudo-terminal', () => {
      it(
        'Adjust with feedback, then Continue; the loop completes and the feedback reached the model',
        async () => {
          const s = await scenario(backend, script(lookIteration('Looked.'), fixIteration()));
          loopRepo(s.cwd);
          // Menu 1: "2" (Adjust), then the feedback line; menu 2: Enter (the default, Continue).
          const { code, screen } = await runInPty(s, ['loop', 'task.yaml', '--approval', 'strict'], ['2\r', 'use a plus sign\r', '\r'], /Choose 1-3 \[1\]: |Feedback for the next iteration: /);
          expect(code, screen).toBe(0);
          expect(screen).toContain('NAVIGATOR_STATUS');
          expect(screen).toContain('Accept iteration 1 and continue?');
          expect(screen).toMatch(/1\. \[Continue\][\s\S]*2\. \[Adjust\][\s\S]*3\. \[Abort\]/);
          expect(screen).toContain('→ Adjust: use a plus sign (terminal)');
          expect(screen).toContain('→ Continue (terminal)');
          expect(screen).toContain('LOOP COMPLETE');
          expect(iterationMessages(s.chats())[1]).toContain('Feedback from the user on iteration 1 (act on it in this iteration): use a plus sign');
        },
        120_000,
      );
    });
  },
  { only: 'pglite' },
);
