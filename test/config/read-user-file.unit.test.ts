import { execFileSync, spawn } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readUserFile, UserFileError } from '../../src/config/read-user-file.js';
import { scratch, thrown, type Scratch } from './helpers.js';

const OPTS = { display: 'x.json', code: 'config_invalid', maxBytes: 1024, kind: 'JSON files' };

let dir: Scratch;
beforeAll(() => (dir = scratch()));
afterAll(() => dir.cleanup());

const canMkfifo = (() => {
  try {
    execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('readUserFile', () => {
  it('reads a regular file as UTF-8', () => {
    expect(readUserFile(dir.write('ok.json', '{"é": 1}'), OPTS)).toBe('{"é": 1}');
    expect(readUserFile(dir.write('empty.json', ''), OPTS)).toBe('');
    expect(readUserFile(dir.write('max.json', 'x'.repeat(1024)), OPTS)).toHaveLength(1024);
  });

  it.each([
    ['missing', (): string => join(dir.root, 'nope.json'), 'x.json: file not found', 'ENOENT'],
    ['a directory', (): string => dir.root, 'x.json: is a directory, not a file', 'EISDIR'],
    ['one byte over the cap', (): string => dir.write('big.json', 'x'.repeat(1025)), 'x.json: is 1025 bytes; JSON files are limited to 1024 bytes (1 KB)', undefined],
  ])('refuses a file that is %s', (_what, path, message, fsCode) => {
    const err = thrown(() => readUserFile(path(), OPTS));
    expect(err).toBeInstanceOf(UserFileError);
    expect(err.message).toBe(message);
    expect(err.exitCode).toBe(2);
    expect(err.code).toBe('config_invalid');
    expect((err as UserFileError).fsCode).toBe(fsCode);
  });

  it.skipIf(!existsSync('/dev/zero'))('refuses a symlink to a device without reading it', () => {
    const link = join(dir.root, 'zero.json');
    symlinkSync('/dev/zero', link);
    const err = thrown(() => readUserFile(link, OPTS));
    expect(err).toBeInstanceOf(UserFileError);
    expect(err.message).toMatch(/^x\.json: is not a regular file \(a FIFO, socket or device\)/);
  });

  it.skipIf(!canMkfifo)('refuses a FIFO nobody writes to, without waiting for a writer', () => {
    const fifo = join(dir.root, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    // The read is synchronous, so no timer can interrupt a read that blocks. The hang guard is a
    // writer that turns up after 20 s (and leaves a mark): a read that waited for a writer ends
    // then, and the mark fails the test.
    const mark = join(dir.root, 'writer-came');
    const writer = spawn(
      process.execPath,
      ['-e', `setTimeout(() => { require('fs').writeFileSync(${JSON.stringify(mark)}, ''); require('fs').openSync(${JSON.stringify(fifo)}, 'w'); }, 20_000)`],
      { stdio: 'ignore' },
    );
    try {
      const err = thrown(() => readUserFile(fifo, OPTS));
      expect(err.message).toMatch(/^x\.json: is not a regular file/);
      expect(existsSync(mark), 'the read waited for a writer').toBe(false);
    } finally {
      writer.kill('SIGKILL');
    }
  });
});
