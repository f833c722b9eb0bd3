/**
 * Progress stays on the screen for the whole run (issue 11, bug 1): navi runs in a
 * pseudo-terminal (`script`); the fake model answers each request only once the screen shows
 * the spinner again — after the model's first words, after a tool, in every loop iteration.
 * A spinner that stopped for good would leave the model waiting: the hang guard fails the test
 * with the screen so far. Also: two answer segments are not glued together, and with NO_COLOR
 * nothing on the screen is a colour code.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, suiteSettings } from '../support/cli.js';
import { fakeOllamaForFile } from '../support/fake-ollama-harness.js';
import type { FakeOllama, FakeScript } from '../support/fake-ollama.js';
import { fixIteration, lookIteration, loopRepo, script } from '../loop-scenario/helpers.js';

const hasScript = existsSync('/usr/bin/script');
/** Hang guard for one run in a pty: far above its real few seconds (a fresh database included). */
const PTY_RUN_GUARD_MS = 90_000;
const ESC = '\u001b';

/** What a person reads: the screen without the spinner's cursor and erase sequences. */
function plain(screen: string): string {
  // eslint-disable-next-line no-control-regex -- removing terminal sequences is the point
  return screen.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A gate per model request: request `i` is answered once `gates[i]` matches the screen written
 * since the previous request was released (what must be visible while navi waits for it).
 */
interface Gated {
  fake: FakeOllama;
  gates: RegExp[];
}

/** Runs navi in a pty, releasing the fake model's answers one by one as the screen allows. */
function runGated(g: Gated, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ code: number; screen: string }> {
  const dir = opts.cwd ?? mkdtempSync(join(tmpdir(), 'navi-tty-'));
  const home = mkdtempSync(join(tmpdir(), 'navi-tty-home-'));
  const cmd = `stty cols 100; exec ${[process.execPath, CLI_PATH, '--ollama-host', g.fake.url, ...args].map(shellQuote).join(' ')}`;
  const before = g.fake.requests.length;
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: home, NAVI_DATA_DIR: join(home, 'data'), TERM: 'xterm', ...suiteSettings(), ...opts.env };
  let release = g.fake.holdChats();
  let gate = 0;
  let since = 0;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', cmd, '/dev/null'], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    const chats = (): number => g.fake.requests.slice(before).filter((r) => r.path === '/api/chat').length;
    // Request `gate` is answered once it has arrived and the screen shows what must be visible
    // while navi waits for it; the next request is held again first.
    const check = (): void => {
      while (gate < g.gates.length && chats() > gate && g.gates[gate]?.test(plain(screen.slice(since)))) {
        gate++;
        since = screen.length;
        const open = release;
        release = gate < g.gates.length ? g.fake.holdChats() : () => undefined;
        open();
      }
    };
    const onData = (d: Buffer): void => {
      screen += d.toString();
      check();
    };
    // A request may arrive after the screen already shows its gate.
    const poll = setInterval(check, 50);
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      clearInterval(poll);
      release();
      reject(new Error(`gate ${gate} (${String(g.gates[gate])}) never showed on the screen; screen since the last gate:\n${plain(screen.slice(since))}\n--- whole screen:\n${plain(screen)}`));
    }, PTY_RUN_GUARD_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      release();
      resolve({ code: code ?? -1, screen });
    });
  });
}

const fake = fakeOllamaForFile({ turns: [] });

const ONE_SHOT: FakeScript = {
  turns: [
    { content: 'Let me check first.', tool_calls: [{ name: 'list_dir', arguments: {} }] },
    { content: 'Now the notes.', tool_calls: [{ name: 'read_file', arguments: { path: 'missing.txt' } }] },
    { content: 'All good.' },
  ],
};

describe.skipIf(!hasScript)('progress in a pseudo-terminal stays alive', () => {
  it('through the model’s text and every later tool of a one-shot run; answer segments stay apart', async () => {
    fake.setScript(ONE_SHOT);
    const { code, screen } = await runGated(
      {
        fake,
        gates: [
          /waiting for the model…/,
          // After "Let me check first." and the tool: the spinner is back while the model reads the result.
          /✓ list_dir[^\n]*\n[\s\S]*waiting for the model…/,
          /✗ read_file missing\.txt[^\n]*\n[\s\S]*waiting for the model…/,
        ],
      },
      ['run', 'look around'],
    );
    const text = plain(screen);
    expect(code, text).toBe(0);
    expect(text).not.toMatch(/first\.\s*Now|notes\.\s*All/);
    expect(text).toMatch(/Let me check first\.\n/);
    expect(text).toMatch(/Now the notes\.\n/);
    expect(text).toContain('All good.');
  }, PTY_RUN_GUARD_MS + 30_000);

  it('with NO_COLOR the screen carries no colour code, and the spinner still runs', async () => {
    fake.setScript({ turns: [{ content: 'All good.' }] });
    const { code, screen } = await runGated(
      { fake, gates: [/waiting for the model…/] },
      ['run', 'look around'],
      { env: { NO_COLOR: '1' } },
    );
    expect(code, plain(screen)).toBe(0);
    // SGR (Select Graphic Rendition) is the colour sequence: ESC [ … m.
    expect(screen).not.toMatch(new RegExp(`${ESC}\\[[0-9;]*m`));
    expect(plain(screen)).toContain('All good.');
  }, PTY_RUN_GUARD_MS + 30_000);

  it('in loop mode, in every iteration after the banner and the status blocks', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'navi-tty-loop-'));
    loopRepo(cwd, { loop: '{ max_iterations: 3 }' });
    fake.setScript(script(lookIteration('Looked at math.js.'), fixIteration()));
    // Iteration 1: two requests (read_file, then the answer); iteration 2: the fix (six requests).
    const gates = [
      /LOOP MODE[\s\S]*iteration 1\/3 · waiting for the model…/,
      /✓ read_file math\.js[^\n]*\n[\s\S]*iteration 1\/3 · waiting for the model…/,
      /iteration 2\/3 · waiting for the model…/,
      /✓ read_file[^\n]*\n[\s\S]*iteration 2\/3 · waiting for the model…/,
      /[✓✗] shell[^\n]*\n[\s\S]*iteration 2\/3 · waiting for the model…/,
      /✓ write_file[^\n]*\n[\s\S]*iteration 2\/3 · waiting for the model…/,
      /[✓✗] shell[^\n]*\n[\s\S]*iteration 2\/3 · waiting for the model…/,
      /✓ loop_signal[^\n]*\n[\s\S]*iteration 2\/3 · waiting for the model…/,
    ];
    const { code, screen } = await runGated({ fake, gates }, ['loop', 'task.yaml'], { cwd });
    const text = plain(screen);
    expect(code, text).toBe(0);
    expect(text).toContain('LOOP COMPLETE');
    // The first iteration's answer and the second's are separate paragraphs.
    expect(text).not.toMatch(/math\.js\.Fixed/);
  }, PTY_RUN_GUARD_MS + 30_000);
});
