/**
 * The progress line on a real terminal shows tool labels the model chose (a path, a command):
 * inside a pseudo-terminal (`script`), escape sequences in them, and in the answer, never reach
 * the screen. ora draws the spinner with its own CSI sequences; none of the model's may appear.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH as CLI, suiteSettings } from '../support/cli.js';
import { fakeOllamaForFile } from '../support/fake-ollama-harness.js';

const hasScript = existsSync('/usr/bin/script');
const ESC = '\u001b';
const BEL = '\u0007';

const fake = fakeOllamaForFile({
  turns: [
    {
      first_chunk_delay_ms: 300,
      tool_calls: [
        { name: 'read_file', arguments: { path: `notes${ESC}]0;navi-title${BEL}${ESC}[2J.txt` } },
        { name: `evil${ESC}]52;c;eA==${BEL}`, arguments: {} },
      ],
    },
    { content: `Fine${ESC}]52;c;cm0gLXJm${BEL}.`, first_chunk_delay_ms: 200 },
  ],
});

describe.skipIf(!hasScript)('in a pseudo-terminal', () => {
  it('tool labels and the answer reach the screen without the model’s escape sequences', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'navi-tty-'));
    const cmd = `stty cols 100; exec ${process.execPath} ${CLI} run --ollama-host ${fake.url} "read it"`;
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: dir, NAVI_DATA_DIR: join(dir, 'data'), TERM: 'xterm', ...suiteSettings() };
    const screen = await new Promise<string>((resolve, reject) => {
      const child = spawn('script', ['-qefc', cmd, '/dev/null'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      // Hang guard: far above the real few seconds (a fresh database included), loaded machine too.
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`navi in a pty did not finish in 90 s; screen so far:\n${out}`));
      }, 90_000);
      child.on('exit', () => {
        clearTimeout(timer);
        resolve(out);
      });
    });
    expect(screen).toContain('Fine.');
    expect(screen).toMatch(/✗ read_file notes\.txt \(/);
    expect(screen).toMatch(/✗ evil \(/);
    for (const seq of [`${ESC}]`, BEL, `${ESC}[2J`]) expect(screen.includes(seq), JSON.stringify(seq)).toBe(false);
  }, 120_000);
});
