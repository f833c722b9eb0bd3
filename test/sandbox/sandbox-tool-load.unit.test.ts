/**
 * User tool modules loaded inside the sandbox (issue 35 item 11): one Node process inside a
 * real bubblewrap imports them, navi checks what they export. The same modules loaded both
 * ways give the same tools and the same problems, word for word; what runs at a module's top
 * level runs inside (a write outside the tree is refused, a `process.exit` ends only the
 * loader); the tools loaded so run sandboxed whatever context calls them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/modes.js';
import { prepareSandbox } from '../../src/sandbox/prepare.js';
import { loadUserTools, type LoadUserToolsOptions } from '../../src/tools/user-tools.js';
import { makeContext, removeDir, tempDir } from '../tools/helpers.js';
import { FIXTURES as FIXTURES_SOURCE, loadOptions, toolSource, writeFiles } from '../user-tools/helpers.js';
import { makeOutsideDir } from './outside.js';

let tmp: string;
/** The user-tools fixtures, copied into the tree. */
let FIXTURES: string;
let sandbox: Sandbox;
/** Outside the tree and outside /tmp (outside.ts). */
let outside: string;

beforeAll(async () => {
  tmp = await tempDir('navi-tool-load-');
  FIXTURES = path.join(tmp, 'fixtures');
  const ready = await prepareSandbox({ mode: 'workspace-write', network: false }, { cwd: tmp, env: process.env });
  if (ready === null) throw new Error('no sandbox');
  sandbox = ready;
  outside = makeOutsideDir('tool-load');
  // The fixtures copied into the tree: a sandbox may hide where the checkout lies (a clone under /tmp).
  fs.cpSync(FIXTURES_SOURCE, FIXTURES, { recursive: true });
  fs.writeFileSync(path.join(FIXTURES, 'package.json'), '{ "type": "module" }\n');
});
afterAll(async () => {
  await removeDir(tmp);
  await removeDir(outside);
});

/** What loading `dirs` comes to: the tools (name, description, parameters) or the error message. */
async function outcome(dirs: LoadUserToolsOptions['dirs'], extra: Partial<LoadUserToolsOptions> = {}): Promise<unknown> {
  try {
    const tools = await loadUserTools(loadOptions(dirs, { cwd: FIXTURES, ...extra }));
    return tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  } catch (err) {
    return { error: (err as Error).message, code: (err as { code?: string }).code };
  }
}

/** Loaded in navi's process and inside the sandbox: the same answer. */
async function expectSame(dirs: LoadUserToolsOptions['dirs'], extra: Partial<LoadUserToolsOptions> = {}): Promise<unknown> {
  const inProcess = await outcome(dirs, extra);
  const inside = await outcome(dirs, { ...extra, sandbox });
  expect(inside).toEqual(inProcess);
  return inside;
}

describe('user tool modules loaded inside the sandbox', () => {
  it('the valid fixtures: the same tools, descriptions and parameters', async () => {
    const tools = (await expectSame([path.join(FIXTURES, 'valid')])) as Array<{ name: string }>;
    expect(tools.map((t) => t.name)).toEqual(['shout', 'greet', 'add', 'divide']);
  });

  it('the invalid fixtures: the same tool_invalid message, problem for problem', async () => {
    const result = (await expectSame([path.join(FIXTURES, 'invalid')])) as { error: string; code: string };
    expect(result.code).toBe('tool_invalid');
    expect(result.error).toContain('invalid user tools (11 problems)');
  });

  it('syntax errors (with their line), bad tools arrays, odd schemas, .mjs/.cjs: the same answers', async () => {
    const dir = path.join(tmp, 'mixed');
    const broken = "export const name = 'broken';\nexport function execute( {\n  return 1;\n}\n";
    const tool = (name: string, parameters: string): string =>
      `export const name = '${name}';\nexport const description = 'd';\nexport const parameters = ${parameters};\nexport const execute = () => 'x';\n`;
    await writeFiles(dir, {
      'a.js': 'export const tools = {};\n',
      'b.js': "export const tools = [{}];\nexport const name = 'b';\n",
      'c.js': 'export const tools = [42, null, [], "s"];\n',
      'd.js': tool('ref', "{ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }"),
      'e.js': tool('big', "{ type: 'object', maxProperties: 10n }"),
      'f.js': tool('cyclic', "(() => { const o = { type: 'object' }; o.self = o; return o; })()"),
      'g.js': tool('to_json', "{ type: 'object', toJSON() { return { type: 'object', properties: { x: { type: 'string' } } }; } }"),
      'h.js': "export const name = 42;\nexport const description = 1n;\nexport const parameters = [];\nexport const execute = Symbol('x');\n",
      'i.js': "throw 'a plain string';\nexport const execute = 1; export const parameters = 1;\n",
      'j.js': "class E extends Error { name = 'CustomError'; }\nthrow new E('custom\\nsecond line');\nexport const execute = 1; export const parameters = 1;\n",
      'k.mjs': toolSource('from_mjs'),
      'l.cjs': "module.exports = { name: 'from_cjs', description: ' CommonJS. ', parameters: { type: 'object' }, execute: () => 'c' };\n",
      'm.js': tool('shell', "{ type: 'object' }"),
      'n.js': 'export default 42;\n',
      'broken.js': broken,
    });
    const result = (await expectSame([dir])) as { error: string };
    expect(result.error).toContain('broken.js: failed to load: SyntaxError: Unexpected number (line 3)');
    expect(result.error).toContain('i.js: failed to load: a plain string');
    expect(result.error).toContain('j.js: failed to load: CustomError: custom');
    expect(result.error).toContain('f.js: parameters: not JSON-serialisable (TypeError: Converting circular structure to JSON');
  });

  it('a module whose top-level await never settles: the same timeout message', async () => {
    const dir = path.join(tmp, 'stuck');
    await writeFiles(dir, { 'stuck.js': 'await new Promise(() => {});\n', 'ok.js': toolSource('fine') });
    const result = (await expectSame([dir], { importTimeoutMs: 300 })) as { error: string };
    expect(result.error).toContain(`${path.join(dir, 'stuck.js')}: failed to load: still loading after 300 ms (a top-level await that never settles?)`);
  });

  it("top-level code runs inside: its write outside the tree is refused and says so; navi's process is untouched", async () => {
    const dir = path.join(tmp, 'writer');
    const marker = path.join(outside, 'top-level-marker');
    await writeFiles(dir, {
      'writer.js': [
        "import fs from 'node:fs';",
        `fs.writeFileSync(${JSON.stringify(marker)}, JSON.stringify(process.env));`,
        toolSource('writer'),
      ].join('\n'),
    });
    const inside = (await outcome([dir], { sandbox })) as { error: string };
    expect(fs.existsSync(marker)).toBe(false);
    expect(inside.error).toContain(`writer.js: failed to load: EROFS: read-only file system, open '${marker}' [the sandbox refused a write outside the working tree: ${marker}; write inside it or in $TMPDIR]`);
  });

  it('a module that calls process.exit at its top level ends the loader, not navi: a problem naming it', async () => {
    const dir = path.join(tmp, 'exits');
    await writeFiles(dir, { 'exits.js': "console.log('bye');\nprocess.exit(3);\nexport const execute = 1; export const parameters = 1;\n" });
    const inside = (await outcome([dir], { sandbox })) as { error: string; code: string };
    expect(inside.code).toBe('tool_invalid');
    expect(inside.error).toContain('exits.js: failed to load: the sandboxed process loading the tool modules ended (exit code 3) before this module finished loading: bye');
  });

  it('a tool loaded inside runs inside, even when the calling context names no sandbox', async () => {
    const dir = path.join(tmp, 'caller');
    const marker = path.join(outside, 'call-marker');
    await writeFiles(dir, {
      'put.js': [
        "import fs from 'node:fs';",
        "export const name = 'put';",
        "export const description = 'Writes a file.';",
        "export const parameters = { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] };",
        "export function execute(args) { fs.writeFileSync(args.file, String(process.pid)); return 'wrote'; }",
        '',
      ].join('\n'),
    });
    const [put] = await loadUserTools(loadOptions([dir], { sandbox }));
    const ctx = makeContext(tmp);
    await expect(put!.execute({ file: path.join(tmp, 'inside.txt') }, ctx)).resolves.toEqual({ ok: true, output: 'wrote' });
    // Its own PID namespace: the process that wrote it is not navi's.
    expect(fs.readFileSync(path.join(tmp, 'inside.txt'), 'utf8')).not.toBe(String(process.pid));
    await expect(put!.execute({ file: marker }, ctx)).rejects.toThrow(/the sandbox refused a write outside the working tree/);
    expect(fs.existsSync(marker)).toBe(false);
  });
});
