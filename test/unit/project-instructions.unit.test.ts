import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findProjectInstructions, MAX_INSTRUCTION_BYTES, repositoryRoot } from '../../src/profiles/project-instructions.js';
import { filterTools, parseToolList, unknownFilterNames } from '../../src/agent/tool-filter.js';
import { parseAnswer } from '../../src/agent/structured-answer.js';

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-instr-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('project instructions', () => {
  it('none found: empty text, the root named', () => {
    const d = tmp();
    execFileSync('git', ['init', '-q'], { cwd: d });
    expect(findProjectInstructions(d)).toEqual({ root: d, files: [], text: '' });
    expect(repositoryRoot(path.join(d))).toBe(d);
  });

  it('a worktree or submodule (.git is a file) is a root too', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, '.git'), 'gitdir: /elsewhere\n');
    fs.mkdirSync(path.join(d, 'a'));
    expect(repositoryRoot(path.join(d, 'a'))).toBe(d);
  });

  it('cuts at the byte cap, saying so, and the same input gives the same bytes', () => {
    const d = tmp();
    execFileSync('git', ['init', '-q'], { cwd: d });
    fs.writeFileSync(path.join(d, 'AGENTS.md'), `${'é'.repeat(MAX_INSTRUCTION_BYTES)}\n`);
    const first = findProjectInstructions(d);
    expect(first.files[0]).toMatchObject({ name: 'AGENTS.md', bytes: MAX_INSTRUCTION_BYTES * 2, used: MAX_INSTRUCTION_BYTES });
    expect(first.text).toContain(`[… AGENTS.md cut here: project instructions are limited to ${MAX_INSTRUCTION_BYTES} bytes]`);
    expect(first.text).not.toContain('\uFFFD');
    expect(findProjectInstructions(d).text).toBe(first.text);
  });

  it('a directory named AGENTS.md is skipped, the next name is used', () => {
    const d = tmp();
    fs.mkdirSync(path.join(d, 'AGENTS.md'));
    fs.writeFileSync(path.join(d, 'CLAUDE.md'), 'rule\n');
    expect(findProjectInstructions(d).files.map((f) => f.name)).toEqual(['CLAUDE.md']);
  });
});

describe('tool filter', () => {
  it('keeps the profile order, narrows, and names what the profile lacks', () => {
    const offered = ['read_file', 'write_file', 'shell', 'todo'];
    expect(filterTools(offered, { only: ['todo', 'read_file'] })).toEqual(['read_file', 'todo']);
    expect(filterTools(offered, { except: ['shell'] })).toEqual(['read_file', 'write_file', 'todo']);
    expect(filterTools(offered, undefined)).toEqual(offered);
    expect(unknownFilterNames(offered, { only: ['read_file', 'web_fetch'], except: ['shel'] })).toEqual(['web_fetch', 'shel']);
    expect(parseToolList(['a,b', 'c  d', 'a'])).toEqual(['a', 'b', 'c', 'd']);
    expect(parseToolList(undefined)).toBeUndefined();
  });
});

describe('structured answer parsing', () => {
  it.each([
    ['{"a":1}', 0, { ok: true, value: { a: 1 } }],
    ['```json\n{"a":1}\n```', 0, { ok: true, value: { a: 1 } }],
    ['', 1, { ok: false, error: 'the model called a tool instead of answering with JSON' }],
    ['', 0, { ok: false, error: 'the answer is empty' }],
  ])('%j', (text, calls, want) => {
    expect(parseAnswer(text, calls)).toEqual(want);
  });

  it('prose is not JSON', () => {
    const parsed = parseAnswer('The answer is 1.', 0);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.error).toMatch(/^the answer is not valid JSON/);
  });
});
