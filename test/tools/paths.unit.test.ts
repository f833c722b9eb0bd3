import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inGitDir, resolveInside, resolveWritable } from '../../src/tools/paths.js';
import { removeDir, tempDir } from './helpers.js';

let root: string;
let cwd: string;
let outside: string;

beforeAll(async () => {
  root = await tempDir('navi-paths-');
  cwd = path.join(root, 'work');
  outside = path.join(root, 'outside');
  await mkdir(path.join(cwd, 'src', 'real'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(cwd, 'src', 'a.ts'), 'a');
  await writeFile(path.join(outside, 'secret.txt'), 's');
  await symlink(outside, path.join(cwd, 'out-link'));
  await symlink(path.join(outside, 'secret.txt'), path.join(cwd, 'secret-link'));
  await symlink(path.join(cwd, 'src', 'real'), path.join(cwd, 'in-link'));
  await symlink(path.join(cwd, 'src', 'a.ts'), path.join(cwd, 'a-link'));
  await symlink(path.join(outside, 'not-yet'), path.join(cwd, 'dangling'));
  await symlink(cwd, path.join(root, 'cwd-link'));
});

afterAll(async () => {
  await removeDir(root);
});

describe('resolveInside', () => {
  it.each([
    ['src/a.ts', 'src/a.ts', 'src/a.ts'],
    ['./src/../src/a.ts', 'src/a.ts', 'src/a.ts'],
    ['.', '.', '.'],
    ['', '.', '.'],
    ['new/dir/file.txt', 'new/dir/file.txt', 'new/dir/file.txt'],
    ['in-link/x.txt', 'in-link/x.txt', 'src/real/x.txt'],
    ['a-link', 'a-link', 'src/a.ts'],
    // Names that start with `..` but are not the `..` component stay inside.
    ['...', '...', '...'],
    ['..foo', '..foo', '..foo'],
    ['..\\x', '..\\x', '..\\x'],
    ['.../x.txt', '.../x.txt', '.../x.txt'],
    ['src/../..foo/x', '..foo/x', '..foo/x'],
  ])('accepts %j (rel %j, real %j)', (userPath, rel, realRel) => {
    const r = resolveInside(cwd, userPath);
    expect(r).toEqual({ ok: true, rel, abs: path.join(cwd, realRel) });
  });

  it('accepts an absolute path inside the working directory', () => {
    expect(resolveInside(cwd, path.join(cwd, 'src', 'a.ts'))).toEqual({
      ok: true,
      rel: 'src/a.ts',
      abs: path.join(cwd, 'src', 'a.ts'),
    });
  });

  it('accepts paths when cwd itself is reached through a symlink', () => {
    const viaLink = path.join(root, 'cwd-link');
    expect(resolveInside(viaLink, 'src/a.ts')).toMatchObject({ ok: true, rel: 'src/a.ts', abs: path.join(cwd, 'src/a.ts') });
    expect(resolveInside(viaLink, path.join(cwd, 'src/a.ts'))).toMatchObject({ ok: true, rel: 'src/a.ts' });
  });

  it.each([
    ['../outside/secret.txt', 'escapes the working directory'],
    ['src/../../outside', 'escapes the working directory'],
    ['..', 'escapes the working directory'],
    ['../', 'escapes the working directory'],
    ['../...', 'escapes the working directory'],
    ['src/../../..foo', 'escapes the working directory'],
    ['/etc/passwd', 'absolute path /etc/passwd is outside the working directory'],
    ['out-link/secret.txt', 'through a symlink'],
    ['out-link/new-file.txt', 'through a symlink'],
    ['secret-link', 'through a symlink'],
    ['dangling', 'dangling symlink'],
    ['dangling/x', 'dangling symlink'],
    ['~/notes.txt', "'~' is not expanded"],
    ['a\0b', 'NUL'],
  ])('refuses %j', (userPath, reason) => {
    const r = resolveInside(cwd, userPath);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });

  it('refuses everything when the working directory does not exist', () => {
    expect(resolveInside(path.join(root, 'missing'), 'a')).toMatchObject({ ok: false });
  });
});

describe('inGitDir', () => {
  it.each([
    ['.git', true],
    ['.git/config', true],
    ['.git/hooks/pre-commit', true],
    ['sub/.git/config', true],
    ['.GIT/config', true],
    ['a\\.git\\config', true],
    ['.gitignore', false],
    ['.github/workflows/ci.yml', false],
    ['x.git/config', false],
    ['git/config', false],
    ['.', false],
  ])('%j → %s', (rel, want) => {
    expect(inGitDir(rel)).toBe(want);
  });
});

describe('resolveWritable', () => {
  it('refuses paths inside .git, named or through a symlink, and allows the rest like resolveInside', async () => {
    await mkdir(path.join(cwd, '.git', 'hooks'), { recursive: true });
    await symlink(path.join(cwd, '.git'), path.join(cwd, 'gitdir-link'));
    for (const p of ['.git/config', '.git/hooks/post-checkout', 'src/../.git/config', 'sub/.git/config', 'gitdir-link/config', path.join(cwd, '.git', 'config')]) {
      const r = resolveWritable(cwd, p);
      expect(r, p).toMatchObject({ ok: false });
      if (!r.ok) expect(r.reason).toContain('is inside .git/; git runs commands from its config and hooks');
    }
    expect(resolveWritable(cwd, '.gitignore')).toMatchObject({ ok: true, rel: '.gitignore' });
    const out = resolveWritable(cwd, 'out-link/x');
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.reason).toContain('through a symlink');
  });
});
