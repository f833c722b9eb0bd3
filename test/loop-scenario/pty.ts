/**
 * navi in a pseudo-terminal (`script`): each time the screen shows `prompt`, the next answer is
 * typed (`\x03` is Ctrl-C, which the terminal turns into SIGINT).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { CLI_PATH } from '../support/cli.js';
import type { Scenario } from './helpers.js';

export const hasScript = existsSync('/usr/bin/script');

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs navi in a pty; each time the screen shows `prompt`, types the next answer. */
export function runInPty(s: Scenario, args: string[], answers: string[], prompt: RegExp): Promise<{ code: number; screen: string }> {
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

