/**
 * The CLI's SIGINT/SIGTERM handling in a real child process: the first signal stops
 * cooperatively, a second exits 130 at once, and once the command has finished a signal exits with
 * the command's own code (never a death by signal while the store closes or stdout drains).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `body` in a child, then sends `signals` 100 ms apart once it is ready. */
function child(body: string, signals: NodeJS.Signals[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }> {
  const source = `
    import { installStopHandlers } from './src/cli/signals.ts';
    ${body}
    console.log('ready');
    setTimeout(() => console.log('timed out'), 10_000);
  `;
  const proc = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  proc.stdout.on('data', (chunk: Buffer) => {
    const first = stdout === '';
    stdout += chunk.toString();
    if (first && stdout.includes('ready')) for (const [i, sig] of signals.entries()) setTimeout(() => proc.kill(sig), 100 * (i + 1));
  });
  return new Promise((resolve) => proc.on('close', (code, signal) => resolve({ code, signal, stdout })));
}

describe('installStopHandlers', () => {
  it('first signal aborts, a second exits 130 after onForce', async () => {
    const r = await child(`
      const stop = installStopHandlers(() => console.log('first'), () => console.log('forced'));
      stop.signal.addEventListener('abort', () => console.log('aborted'));
    `, ['SIGINT', 'SIGTERM']);
    expect(r).toMatchObject({ code: 130, signal: null });
    expect(r.stdout.split('\n').filter(Boolean)).toEqual(['ready', 'first', 'aborted', 'forced']);
  });

  it.each<NodeJS.Signals>(['SIGINT', 'SIGTERM'])('after finish(3), %s exits 3 at once', async (sig) => {
    const r = await child(`
      const stop = installStopHandlers(() => console.log('first'));
      stop.finish(3);
      stop.finish(0); // only the first counts
    `, [sig]);
    expect(r).toMatchObject({ code: 3, signal: null });
    expect(r.stdout).not.toContain('first');
  });

  it('after dispose, the handlers are gone (another command installs its own)', async () => {
    const r = await child(`
      const stop = installStopHandlers(() => console.log('first'));
      stop.dispose();
      stop.finish(3);
      installStopHandlers(() => { console.log('second owner'); process.exit(7); });
    `, ['SIGINT']);
    expect(r).toMatchObject({ code: 7, signal: null });
    expect(r.stdout).toContain('second owner');
  });
});
