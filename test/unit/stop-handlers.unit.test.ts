/**
 * The CLI's SIGINT/SIGTERM handling in a real child process: the first signal stops
 * cooperatively, a second exits 130 at once, and once the command has finished a signal exits with
 * the command's own code (never a death by signal while the store closes or stdout drains).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Runs `body` in a child, then sends each signal once its stdout shows the line named with it
 * (`ready` first): each signal goes when the previous one has visibly been handled, never on a
 * timer. The child gives up by itself after 20 s (a hang guard: it then prints `timed out`).
 */
function child(body: string, signals: Array<[NodeJS.Signals, string]>): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }> {
  const source = `
    import { installStopHandlers } from './src/cli/os-signals.ts';
    ${body}
    console.log('ready');
    setTimeout(() => console.log('timed out'), 20_000);
  `;
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  let sent = 0;
  proc.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const lines = stdout.split('\n');
    for (let next = signals[sent]; next !== undefined && lines.includes(next[1]); next = signals[sent]) {
      proc.kill(next[0]);
      sent++;
    }
  });
  return new Promise((resolve) => proc.on('close', (code, signal) => resolve({ code, signal, stdout })));
}

describe('installStopHandlers', () => {
  it('first signal aborts, a second exits 130 after onForce', async () => {
    const r = await child(`
      const stop = installStopHandlers(() => console.log('first'), () => console.log('forced'));
      stop.signal.addEventListener('abort', () => console.log('aborted'));
    `, [['SIGINT', 'ready'], ['SIGTERM', 'aborted']]);
    expect(r).toMatchObject({ code: 130, signal: null });
    expect(r.stdout.split('\n').filter(Boolean)).toEqual(['ready', 'first', 'aborted', 'forced']);
  });

  it.each<NodeJS.Signals>(['SIGINT', 'SIGTERM'])('after finish(3), %s exits 3 at once', async (sig) => {
    const r = await child(`
      const stop = installStopHandlers(() => console.log('first'));
      stop.finish(3);
      stop.finish(0); // only the first counts
    `, [[sig, 'ready']]);
    expect(r).toMatchObject({ code: 3, signal: null });
    expect(r.stdout).not.toContain('first');
  });

  it('after dispose, the handlers are gone (another command installs its own)', async () => {
    const r = await child(`
      const stop = installStopHandlers(() => console.log('first'));
      stop.dispose();
      stop.finish(3);
      installStopHandlers(() => { console.log('second owner'); process.exit(7); });
    `, [['SIGINT', 'ready']]);
    expect(r).toMatchObject({ code: 7, signal: null });
    expect(r.stdout).toContain('second owner');
  });
});
