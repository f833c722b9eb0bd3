import { execFileSync } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { searchMode } from '../../src/tools/builtin/search-files.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolResult } from '../../src/tools/types.js';
import { type TestContext, makeContext, removeDir, tempDir } from './helpers.js';

const registry = new ToolRegistry(builtinTools());
const allowed = new Set(registry.names());

let root: string;
let cwd: string;
let ctx: TestContext;

function call(name: string, args: unknown): Promise<ToolResult> {
  return registry.execute(name, args, ctx, allowed);
}

beforeEach(async () => {
  root = await tempDir('navi-files-');
  cwd = path.join(root, 'work');
  await mkdir(path.join(cwd, 'src'), { recursive: true });
  await writeFile(path.join(root, 'secret.txt'), 'top secret\n');
  ctx = makeContext(cwd);
});

afterEach(async () => {
  await removeDir(root);
});

describe('confinement', () => {
  it.each([
    ['read_file', { path: '../secret.txt' }],
    ['read_file', { path: '/etc/passwd' }],
    ['write_file', { path: '../evil.txt', content: 'x' }],
    ['write_file', { path: '/tmp/navi-evil.txt', content: 'x' }],
    ['edit_file', { path: '../secret.txt', old_string: 'top', new_string: 'no' }],
    ['list_dir', { path: '..' }],
    ['search_files', { pattern: 'secret', path: '..' }],
  ])('%s %j is refused', async (name, args) => {
    const result = await call(name, args);
    expect(result).toMatchObject({ ok: false });
    expect(result.output).toMatch(/^refused: /);
  });

  it('refuses reads and writes through a symlink that leads out', async () => {
    await symlink(root, path.join(cwd, 'up'));
    expect((await call('read_file', { path: 'up/secret.txt' })).output).toContain('through a symlink');
    expect((await call('write_file', { path: 'up/new.txt', content: 'x' })).output).toContain('through a symlink');
    await expect(readFile(path.join(root, 'new.txt'))).rejects.toThrow();
  });

  it('allows a symlink that stays inside', async () => {
    await writeFile(path.join(cwd, 'src', 'a.txt'), 'inside\n');
    await symlink(path.join(cwd, 'src'), path.join(cwd, 'lnk'));
    expect(await call('read_file', { path: 'lnk/a.txt' })).toEqual({ ok: true, output: 'inside' });
    expect(await call('write_file', { path: 'lnk/b.txt', content: 'hey' })).toMatchObject({ ok: true });
    expect(await readFile(path.join(cwd, 'src', 'b.txt'), 'utf8')).toBe('hey');
  });
});

describe('read_file', () => {
  it('returns the text of a small file as is', async () => {
    await writeFile(path.join(cwd, 'a.txt'), 'one\ntwo\nthree\n');
    expect(await call('read_file', { path: 'a.txt' })).toEqual({ ok: true, output: 'one\ntwo\nthree' });
  });

  it('pages with offset and limit and says where to continue', async () => {
    await writeFile(path.join(cwd, 'a.txt'), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n'));
    expect(await call('read_file', { path: 'a.txt', offset: 3, limit: 2 })).toEqual({
      ok: true,
      output: '[a.txt lines 3-4]\nline 3\nline 4\n[more lines follow; continue with offset=5]',
    });
    // Local models often send numbers as strings.
    expect((await call('read_file', { path: 'a.txt', offset: '3', limit: '2' })).output).toContain('line 4\n[more');
    expect(await call('read_file', { path: 'a.txt', offset: 9 })).toEqual({
      ok: true,
      output: '[a.txt lines 9-10 of 10]\nline 9\nline 10',
    });
    expect(await call('read_file', { path: 'a.txt', offset: 20 })).toEqual({
      ok: false,
      output: 'a.txt has 10 lines; offset 20 is past the end',
    });
  });

  it('stops a large file at its budget with a paging hint', async () => {
    await writeFile(path.join(cwd, 'big.txt'), `${'x'.repeat(99)}\n`.repeat(5000));
    const result = await call('read_file', { path: 'big.txt' });
    expect(result.ok).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThan(32 * 1024);
    expect(result.output).toMatch(/\[more lines follow; continue with offset=\d+\]$/);
  });

  it('refuses a binary file', async () => {
    await writeFile(path.join(cwd, 'bin.dat'), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02]));
    expect(await call('read_file', { path: 'bin.dat' })).toEqual({ ok: false, output: 'bin.dat: binary file, 7 bytes' });
  });

  it('refuses a directory', async () => {
    expect(await call('read_file', { path: 'src' })).toEqual({ ok: false, output: 'src is a directory; use list_dir' });
  });

  it('refuses a FIFO without blocking', async () => {
    execFileSync('mkfifo', [path.join(cwd, 'pipe')]);
    // Nobody ever writes to it: a read that blocked would never return (the test's hang guard).
    const result = await call('read_file', { path: 'pipe' });
    expect(result).toEqual({ ok: false, output: 'pipe is not a regular file (FIFO, socket or device)' });
    expect((await call('write_file', { path: 'pipe', content: 'x' })).output).toContain('not a regular file');
    expect((await call('edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' })).output).toContain(
      'not a regular file',
    );
  });

  it('reports a missing file and an empty one', async () => {
    expect(await call('read_file', { path: 'nope.txt' })).toEqual({ ok: false, output: 'nope.txt: no such file' });
    await writeFile(path.join(cwd, 'empty.txt'), '');
    expect(await call('read_file', { path: 'empty.txt' })).toEqual({ ok: true, output: '(empty file)' });
  });
});

describe('.git is not writable', () => {
  it('write_file and edit_file refuse .git/ paths with a clear result; reading is fine', async () => {
    await mkdir(path.join(cwd, '.git', 'hooks'), { recursive: true });
    await writeFile(path.join(cwd, '.git', 'config'), '[core]\n\tbare = false\n');
    const refusals = [
      await call('write_file', { path: '.git/config', content: '[core]\n\tfsmonitor = touch PWNED\n' }),
      await call('write_file', { path: '.git/hooks/pre-commit', content: '#!/bin/sh\ntouch PWNED\n' }),
      await call('write_file', { path: 'vendor/lib/.git/config', content: 'x' }),
      await call('edit_file', { path: '.git/config', old_string: 'bare = false', new_string: 'fsmonitor = touch PWNED' }),
    ];
    for (const r of refusals) {
      expect(r.ok).toBe(false);
      expect(r.output).toMatch(/^refused: .* is inside \.git\/; git runs commands from its config and hooks, so file tools do not write there$/);
    }
    expect(await readFile(path.join(cwd, '.git', 'config'), 'utf8')).toBe('[core]\n\tbare = false\n');
    await expect(readFile(path.join(cwd, '.git', 'hooks', 'pre-commit'))).rejects.toThrow();
    expect(await call('read_file', { path: '.git/config' })).toMatchObject({ ok: true });
    expect(await call('write_file', { path: '.gitignore', content: 'dist\n' })).toMatchObject({ ok: true });
  });
});

describe('write_file', () => {
  it('creates parent directories and reports bytes written', async () => {
    expect(await call('write_file', { path: 'deep/er/x.txt', content: 'héllo' })).toEqual({
      ok: true,
      output: 'created deep/er/x.txt (6 bytes)',
    });
    expect(await readFile(path.join(cwd, 'deep/er/x.txt'), 'utf8')).toBe('héllo');
    expect((await call('write_file', { path: 'deep/er/x.txt', content: 'new' })).output).toBe('overwrote deep/er/x.txt (3 bytes)');
  });
});

describe('edit_file', () => {
  beforeEach(async () => {
    await writeFile(path.join(cwd, 'f.ts'), 'const a = 1;\nconst b = 2;\nconst b2 = 2;\n');
  });

  it('replaces exactly one occurrence', async () => {
    expect(await call('edit_file', { path: 'f.ts', old_string: 'a = 1', new_string: 'a = $& 10' })).toEqual({
      ok: true,
      output: 'edited f.ts at line 1',
    });
    expect(await readFile(path.join(cwd, 'f.ts'), 'utf8')).toBe('const a = $& 10;\nconst b = 2;\nconst b2 = 2;\n');
  });

  it('refuses 0 matches and several matches, leaving the file alone', async () => {
    expect(await call('edit_file', { path: 'f.ts', old_string: 'const c', new_string: 'x' })).toEqual({
      ok: false,
      output: 'old_string not found in f.ts (0 matches); read the file and copy the exact text',
    });
    expect(await call('edit_file', { path: 'f.ts', old_string: '= 2;', new_string: '= 3;' })).toEqual({
      ok: false,
      output: 'old_string matches 2 times in f.ts; include more surrounding lines to make it unique',
    });
    expect(await readFile(path.join(cwd, 'f.ts'), 'utf8')).toBe('const a = 1;\nconst b = 2;\nconst b2 = 2;\n');
  });

  it('matches text copied from read_file in a CRLF file', async () => {
    await writeFile(path.join(cwd, 'w.txt'), 'one\r\ntwo\r\nthree\r\n');
    expect((await call('edit_file', { path: 'w.txt', old_string: 'one\ntwo', new_string: 'uno\ndos' })).ok).toBe(true);
    expect(await readFile(path.join(cwd, 'w.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n');
  });
});

describe('list_dir', () => {
  it('lists sorted entries with / after directories', async () => {
    await writeFile(path.join(cwd, 'b.txt'), '');
    await writeFile(path.join(cwd, 'A.md'), '');
    await symlink(path.join(cwd, 'src'), path.join(cwd, 'src-link'));
    expect(await call('list_dir', {})).toEqual({ ok: true, output: 'A.md\nb.txt\nsrc-link/\nsrc/' });
    expect(await call('list_dir', { path: 'src' })).toEqual({ ok: true, output: '(src is empty)' });
  });

  it('caps long listings', async () => {
    await Promise.all(Array.from({ length: 510 }, (_, i) => writeFile(path.join(cwd, 'src', `f${String(i).padStart(3, '0')}`), '')));
    const result = await call('list_dir', { path: 'src' });
    expect(result.output.split('\n')).toHaveLength(501);
    expect(result.output.endsWith('[… 10 more entries]')).toBe(true);
  });
});

describe('search_files', () => {
  beforeEach(async () => {
    await mkdir(path.join(cwd, 'node_modules', 'dep'), { recursive: true });
    await mkdir(path.join(cwd, 'src', 'sub'), { recursive: true });
    await writeFile(path.join(cwd, 'src', 'a.ts'), 'export function hello() {}\nconst x = hello();\n');
    await writeFile(path.join(cwd, 'src', 'sub', 'b.ts'), 'hello(world)\n');
    await writeFile(path.join(cwd, 'node_modules', 'dep', 'index.js'), 'hello\n');
    await writeFile(path.join(cwd, 'src', 'img.bin'), Buffer.from('hello\0world'));
  });

  it('finds regex matches as file:line: text, skipping node_modules and binaries', async () => {
    expect(await call('search_files', { pattern: 'hel+o\\(' })).toEqual({
      ok: true,
      output: 'src/a.ts:1: export function hello() {}\nsrc/a.ts:2: const x = hello();\nsrc/sub/b.ts:1: hello(world)',
    });
  });

  it('searches an invalid regex literally, under a sub-path', async () => {
    expect(await call('search_files', { pattern: 'hello(world', path: 'src/sub' })).toEqual({
      ok: true,
      output: 'src/sub/b.ts:1: hello(world)',
    });
  });

  it('says so when nothing matches', async () => {
    const result = await call('search_files', { pattern: 'zzz' });
    expect(result).toMatchObject({ ok: true });
    expect(result.output).toMatch(/^no matches/);
  });

  it('stops at 200 matches', async () => {
    await writeFile(path.join(cwd, 'many.txt'), 'match\n'.repeat(300));
    const result = await call('search_files', { pattern: 'match' });
    expect(result.output.split('\n').filter((l) => l.startsWith('many.txt:'))).toHaveLength(200);
    expect(result.output).toContain('[stopped after 200 matches');
    const regex = await call('search_files', { pattern: 'mat+ch$' });
    expect(regex.output.split('\n').filter((l) => l.startsWith('many.txt:'))).toHaveLength(200);
    expect(regex.output).toContain('[stopped after 200 matches');
  });

  it.each([
    ['hello', 'literal'],
    ['hello world-1/2', 'literal'],
    ['hello(world', 'literal'],
    ['[unclosed', 'literal'],
    ['hel+o', 'regex'],
    ['^(a+)+$', 'regex'],
    ['a.b', 'regex'],
  ])('searchMode(%j) is %s', (pattern, kind) => {
    expect(searchMode(pattern).kind).toBe(kind);
  });

  describe('a catastrophic regex', () => {
    const CATASTROPHIC = '^(a+)+$';
    beforeEach(async () => {
      // 30 a's: about 2^30 backtracking steps, seconds on the main thread (so that without the
      // worker these tests fail instead of hanging the suite); every added `a` doubles it.
      await writeFile(path.join(cwd, 'src', 'aaa.txt'), `${'a'.repeat(30)}!\n`);
    });

    it('times out at tools.shell.timeout_s as a clear result, with what it found before', async () => {
      await writeFile(path.join(cwd, 'src', '0-first.txt'), 'aaaa\n');
      ctx = makeContext(cwd, { shell: { allow: [], deny: [], timeoutS: 1, maxOutputBytes: 65536 } });
      // Run to its end, the regex finds no match (ok: true); the timed-out result is the limit at work.
      const result = await call('search_files', { pattern: CATASTROPHIC, path: 'src' });
      expect(result.ok).toBe(false);
      expect(result.output).toMatch(/^search timed out after 1 s: \/\^\(a\+\)\+\$\/ backtracks too much or there is too much to search; simplify the pattern or narrow the path/);
      // The worker was replaced: the next regex search works.
      expect(await call('search_files', { pattern: 'hel+o\\(', path: 'src/sub' })).toEqual({ ok: true, output: 'src/sub/b.ts:1: hello(world)' });
    });

    it('stops when the run is stopped, and the event loop stays free meanwhile', async () => {
      const stop = new AbortController();
      ctx = makeContext(cwd, { signal: stop.signal });
      let settled = false;
      const result = call('search_files', { pattern: CATASTROPHIC });
      void result.then(
        () => (settled = true),
        () => (settled = true),
      );
      // Four timer ticks while the search is still running: on the main thread, it would have
      // finished (seconds of backtracking, no match) before a single tick.
      await new Promise<void>((resolve) => {
        let ticks = 0;
        const ticker = setInterval(() => {
          if (++ticks < 4) return;
          clearInterval(ticker);
          resolve();
        }, 50);
      });
      expect(settled, 'the search still runs while timers fire').toBe(false);
      stop.abort();
      // Aborted, not finished: the search itself would answer "no matches".
      await expect(result).rejects.toThrow();
    });
  });
});
