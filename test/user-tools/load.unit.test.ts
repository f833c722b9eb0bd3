import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { userToolDirs } from '../../src/tools/user-tool-files.js';
import { loadUserTools, userToolFile } from '../../src/tools/user-tools.js';
import { removeDir, tempDir } from '../tools/helpers.js';
import { FIXTURES, loadOptions, toolSource, writeFiles } from './helpers.js';

let tmp: string;

beforeAll(async () => {
  tmp = await tempDir('navi-user-tools-');
});
afterAll(async () => {
  await removeDir(tmp);
});

/** The load error for `dirs`; fails the test when loading succeeds. */
async function loadError(...dirs: string[]): Promise<InvalidInputError> {
  const err: unknown = await loadUserTools(loadOptions(dirs, { cwd: FIXTURES })).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InvalidInputError);
  return err as InvalidInputError;
}

describe('loadUserTools: valid modules', () => {
  it('loads named exports, a tools array and a default export, skipping helpers and other files', async () => {
    const tools = await loadUserTools(loadOptions([path.join(FIXTURES, 'valid')]));
    // Files in name order: default-export.js, greet.js, math.js; _shared.js and README.md are skipped.
    expect(tools.map((t) => t.name)).toEqual(['shout', 'greet', 'add', 'divide']);
    expect(userToolFile(tools[1]!)).toBe(path.join(FIXTURES, 'valid', 'greet.js'));
  });

  it('keeps the description (trimmed) and parameters exactly as the module wrote them', async () => {
    const [shout, greet] = await loadUserTools(loadOptions([path.join(FIXTURES, 'valid')]));
    expect(shout!.description).toBe('Upper-cases text (this description is trimmed before the model sees it).');
    expect(greet!.parameters).toEqual({
      type: 'object',
      properties: { who: { type: 'string', description: 'Who to greet' }, times: { type: 'integer', minimum: 1 } },
      required: ['who'],
      additionalProperties: false,
    });
    expect(shout!.parameters?.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
  });

  it('loads .mjs and .cjs, and a .ts file whose compiled .js sits beside it', async () => {
    const dir = path.join(tmp, 'extensions');
    await writeFiles(dir, {
      'one.mjs': toolSource('from_mjs'),
      'two.cjs': `module.exports = { name: 'from_cjs', description: 'CommonJS.', parameters: { type: 'object' }, execute: () => 'c' };\n`,
      'three.ts': 'export const name: string = "from_js";\n',
      'three.js': toolSource('from_js'),
      'three.d.ts': 'export declare const name: string;\n',
      '.hidden.js': 'throw new Error("never imported");\n',
    });
    const tools = await loadUserTools(loadOptions([dir]));
    expect(tools.map((t) => t.name)).toEqual(['from_mjs', 'from_js', 'from_cjs']);
  });

  it('returns nothing when the default directory is missing', async () => {
    expect(await loadUserTools(loadOptions(userToolDirs(path.join(tmp, 'no-project'))))).toEqual([]);
  });
});

describe('userToolDirs', () => {
  it('scans ./tools (optional) then each configured path (required), once each', () => {
    expect(userToolDirs('/p', ['/shared/tools', '/p/tools', '/shared/tools'])).toEqual([
      { path: '/p/tools', optional: false },
      { path: '/shared/tools', optional: false },
    ]);
    expect(userToolDirs('/p')).toEqual([{ path: '/p/tools', optional: true }]);
  });
});

describe('loadUserTools: invalid modules', () => {
  it('collects every problem of every file into one tool_invalid error (exit 2)', async () => {
    const err = await loadError(path.join(FIXTURES, 'invalid'));
    expect(err.code).toBe('tool_invalid');
    expect(err.exitCode).toBe(2);
    const [summary, ...lines] = err.message.split('\n');
    expect(summary).toBe('invalid user tools (11 problems); fix or remove these files:');
    expect(lines.map((line) => line.trim())).toEqual([
      'invalid/array-schema.js: description: must not be empty',
      'invalid/array-schema.js: parameters: must have type: "object" (tool arguments are a JSON object)',
      'invalid/bad-name.js: name: must be snake_case matching ^[a-z][a-z0-9_]{0,63}$, got "Bad-Name"',
      'invalid/bad-schema.js: parameters.properties.a.type: expected one of "array", "boolean", "integer", "null", "number", "object", "string"',
      "invalid/dup-b.js tools[1]: name 'dup' is already defined by invalid/dup-a.js",
      'invalid/empty.js: exports no tool: export name, description, parameters and execute, a default object with them, or a tools array',
      "invalid/missing-dependency.js: failed to load: Cannot find package 'navi-no-such-package-for-tests' imported from " +
        path.join(FIXTURES, 'invalid', 'missing-dependency.js'),
      'invalid/no-execute.js: execute: missing',
      "invalid/shell.js: name 'shell' is a built-in tool; choose another name",
      'invalid/throws.js: failed to load: TOOLS_CONFIG is not set',
      'invalid/typo-schema.js: parameters: strict mode: unknown keyword: "requried"',
    ]);
    expect(err.message).not.toMatch(/\n\s+at /);
    expect(err.message).not.toContain('second line of detail');
  });

  it('names a syntax error with its line', async () => {
    const dir = path.join(tmp, 'syntax');
    const broken = "export const name = 'broken';\nexport function execute( {\n  return 1;\n}\n";
    // No package.json here: Node 20 detects the .js file's module syntax, and its `--check` does not.
    await writeFiles(dir, { 'broken.js': broken, 'broken.mjs': `\n${broken}` });
    const err = await loadError(dir);
    expect(err.message).toContain(`${path.join(dir, 'broken.js')}: failed to load: SyntaxError: Unexpected number (line 3)`);
    expect(err.message).toContain(`${path.join(dir, 'broken.mjs')}: failed to load: SyntaxError: Unexpected number (line 4)`);
  });

  it('refuses a TypeScript file with a hint, unless compiled', async () => {
    const dir = path.join(tmp, 'typescript');
    await writeFiles(dir, { 'lint.ts': 'export const name = "lint";\n' });
    const err = await loadError(dir);
    expect(err.message).toContain(
      `${path.join(dir, 'lint.ts')}: TypeScript cannot be loaded directly; compile it to lint.js (or rename it to lint.mjs if it is plain JavaScript)`,
    );
  });

  it('reports a configured directory that does not exist, but not a missing ./tools', async () => {
    const missing = path.join(tmp, 'configured-but-missing');
    const err = await loadError(missing);
    expect(err.message).toContain(`${missing}: user tools directory not found (config tools.paths)`);
    await expect(loadUserTools(loadOptions([{ path: missing, optional: true }]))).resolves.toEqual([]);
  });

  it('reports a tools array that is not one and a module with both tools and name', async () => {
    const dir = path.join(tmp, 'arrays');
    await writeFiles(dir, {
      'a.js': 'export const tools = {};\n',
      'b.js': "export const tools = [{}];\nexport const name = 'b';\n",
      'c.js': 'export const tools = [42];\n',
    });
    const lines = (await loadError(dir)).message.split('\n').slice(1).map((line) => line.trim());
    expect(lines).toEqual([
      `${path.join(dir, 'a.js')}: tools: must be a non-empty array of tool objects, got an object`,
      `${path.join(dir, 'b.js')}: exports both \`tools\` and \`name\`; use one or the other`,
      `${path.join(dir, 'c.js')} tools[0]: must be an object with name, description, parameters and execute, got a number`,
    ]);
  });

  it('reports schemas ajv cannot use: unresolvable $ref, unknown $schema, non-JSON values', async () => {
    const dir = path.join(tmp, 'schemas');
    const tool = (name: string, parameters: string): string =>
      `export const name = '${name}';\nexport const description = 'd';\nexport const parameters = ${parameters};\nexport const execute = () => 'x';\n`;
    await writeFiles(dir, {
      'a.js': tool('ref', "{ type: 'object', properties: { a: { $ref: '#/$defs/missing' } } }"),
      'b.js': tool('draft4', "{ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }"),
      'c.js': tool('big', "{ type: 'object', maxProperties: 10n }"),
    });
    const lines = (await loadError(dir)).message.split('\n').slice(1).map((line) => line.trim());
    expect(lines).toEqual([
      `${path.join(dir, 'a.js')}: parameters: can't resolve reference #/$defs/missing from id #`,
      `${path.join(dir, 'b.js')}: parameters.$schema: unsupported "http://json-schema.org/draft-04/schema#"; omit it (draft-07) or use draft 2019-09 or 2020-12`,
      `${path.join(dir, 'c.js')}: parameters: not JSON-serialisable (TypeError: Do not know how to serialize a BigInt)`,
    ]);
  });

  it('gives up on a module whose top-level await never settles', async () => {
    const dir = path.join(tmp, 'stuck');
    await writeFiles(dir, { 'stuck.js': 'await new Promise(() => {});\n' });
    const err: unknown = await loadUserTools(loadOptions([dir], { importTimeoutMs: 100 })).catch((e: unknown) => e);
    expect((err as Error).message).toContain(
      `${path.join(dir, 'stuck.js')}: failed to load: still loading after 100 ms (a top-level await that never settles?)`,
    );
  });

  it('lets two tools share a schema $id', async () => {
    const dir = path.join(tmp, 'same-id');
    const source = (name: string): string =>
      `export const name = '${name}';\nexport const description = 'd';\nexport const parameters = { $id: 'args', type: 'object' };\nexport const execute = () => 'x';\n`;
    await writeFiles(dir, { 'a.js': source('first'), 'b.js': source('second') });
    expect((await loadUserTools(loadOptions([dir]))).map((t) => t.name)).toEqual(['first', 'second']);
  });
});
