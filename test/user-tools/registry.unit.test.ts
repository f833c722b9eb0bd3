import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';
import type { ToolDefinition } from '../../src/tools/types.js';
import { loadUserTools } from '../../src/tools/user-tools.js';
import { makeContext, removeDir, tempDir } from '../tools/helpers.js';
import { FIXTURES, loadOptions, nativeImport } from './helpers.js';

let cwd: string;
let userTools: ToolDefinition[];
let registry: ToolRegistry;
let allowed: Set<string>;

beforeAll(async () => {
  cwd = await tempDir('navi-user-tools-registry-');
  userTools = await loadUserTools(loadOptions([path.join(FIXTURES, 'valid'), path.join(FIXTURES, 'runtime')]));
  registry = new ToolRegistry([...builtinTools(), ...userTools]);
  allowed = new Set(registry.names());
});
afterAll(async () => {
  await removeDir(cwd);
});

function call(name: string, args: unknown, overrides: Parameters<typeof makeContext>[1] = {}) {
  return registry.execute(name, args, makeContext(cwd, overrides), allowed);
}

describe('user tools in the registry: schemas', () => {
  it("sends the module's parameters as the JSON schema, byte-identical on every call", async () => {
    const { parameters } = (await nativeImport(pathToFileURL(path.join(FIXTURES, 'valid', 'greet.js')).href)) as {
      parameters: Record<string, unknown>;
    };
    const first = registry.schemas(['read_file', 'greet']);
    expect(first[1]).toEqual({
      type: 'function',
      function: { name: 'greet', description: 'Greets someone by name.', parameters },
    });
    expect(JSON.stringify(first[1]!.function.parameters)).toBe(JSON.stringify(parameters));
    // A tool changing its own module object later must not change what the model is sent.
    (parameters.properties as Record<string, unknown>).injected = { type: 'string' };
    expect(JSON.stringify(registry.schemas(['read_file', 'greet']))).toBe(JSON.stringify(first));
    delete (parameters.properties as Record<string, unknown>).injected;
  });
});

describe('user tools in the registry: calls', () => {
  it('runs named, array and default-export tools with object or JSON-string arguments', async () => {
    expect(await call('greet', { who: 'Ada', times: 2 })).toEqual({ ok: true, output: 'Hello, Ada!Hello, Ada!' });
    expect(await call('greet', '{"who":"Bob"}')).toEqual({ ok: true, output: 'Hello, Bob!' });
    expect(await call('add', { a: 2, b: 3 })).toEqual({ ok: true, output: '5' });
    expect(await call('divide', { a: 1, b: 0 })).toEqual({ ok: false, output: 'division by zero' });
    expect(await call('shout', { text: 'hey' })).toEqual({ ok: true, output: 'HEY!' });
  });

  it.each([
    ['greet', { who: 5 }, "invalid arguments for 'greet': who: expected string, received number"],
    ['greet', {}, "invalid arguments for 'greet': who: required"],
    ['greet', { who: 'a', times: 0 }, "invalid arguments for 'greet': times: must be >= 1"],
    ['greet', { who: 'a', times: 1.5 }, "invalid arguments for 'greet': times: expected integer, received number"],
    ['greet', { who: 'a', extra: true }, "invalid arguments for 'greet': extra: unexpected property"],
    ['greet', '[1]', "invalid arguments for 'greet': (arguments): expected object, received array"],
    ['greet', '{"who": ', "invalid JSON arguments for 'greet': "],
    ['add', { a: '1', b: null }, "invalid arguments for 'add': a: expected number, received string; b: expected number, received null"],
    ['shout', { text: '' }, "invalid arguments for 'shout': text: must NOT have fewer than 1 characters"],
  ])('validates %s %j with its JSON schema → %s', async (name, args, expected) => {
    const result = await call(name, args);
    expect(result.ok).toBe(false);
    expect(result.output.startsWith(expected)).toBe(true);
  });

  it.each([
    ['fails', "tool 'fails' failed: disk on fire"],
    ['fails_sync', "tool 'fails_sync' failed: plain string thrown"],
    ['times_out', "tool 'times_out' failed: TimeoutError: The operation was aborted due to timeout"],
    ['returns_number', "tool 'returns_number' returned a number; a user tool must return a string or { ok: boolean, output: string }"],
    ['returns_nothing', "tool 'returns_nothing' returned undefined; a user tool must return a string or { ok: boolean, output: string }"],
    ['returns_bad_object', "tool 'returns_bad_object' returned an object; a user tool must return a string or { ok: boolean, output: string }"],
  ])('turns %s into a failed result the model reads', async (name, expected) => {
    expect(await call(name, {})).toEqual({ ok: false, output: expected });
  });

  it('gives execute a copy of the arguments and only cwd, sessionId and signal', async () => {
    const args = { text: 'original' };
    expect(await call('mutates', args)).toEqual({ ok: true, output: 'done' });
    expect(args.text).toBe('original');
    const result = await call('context', {}, { sessionId: 'session-42' });
    expect(JSON.parse(result.output)).toEqual({
      keys: ['cwd', 'sessionId', 'signal'],
      cwd,
      sessionId: 'session-42',
      hasSignal: true,
      frozen: true,
    });
  });

  it('redacts and caps user tool output like a built-in', async () => {
    const secret = 'hunter2-very-secret';
    const redact = (text: string): string => text.replaceAll(secret, '[REDACTED:API_TOKEN]');
    expect(await call('echo', { text: `token=${secret}` }, { redact })).toEqual({ ok: true, output: 'token=[REDACTED:API_TOKEN]' });
    const small = new ToolRegistry(userTools, { maxOutputBytes: 1024 });
    const result = await small.execute('echo', { text: 'x'.repeat(10_000) }, makeContext(cwd), new Set(['echo']));
    expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(1024 + 200);
    expect(result.output.length).toBeLessThan(10_000);
  });
});

describe('user tools in the registry: stopping', () => {
  it('returns when the run stops, even if execute ignores the signal', async () => {
    const { calls } = (await nativeImport(pathToFileURL(path.join(FIXTURES, 'runtime', 'behaviours.js')).href)) as {
      calls: { hangs: number };
    };
    const before = calls.hangs;
    const controller = new AbortController();
    const pending = call('hangs', {}, { signal: controller.signal });
    // Stopped once the tool runs; it never settles, so only the stop can end the call.
    await vi.waitFor(() => expect(calls.hangs).toBe(before + 1), { timeout: 20_000 });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('ignores what an abandoned call settles to later', async () => {
    const { calls } = (await nativeImport(pathToFileURL(path.join(FIXTURES, 'runtime', 'behaviours.js')).href)) as {
      calls: { hangsSettled: number };
    };
    const before = calls.hangsSettled;
    const controller = new AbortController();
    const pending = call('late', {}, { signal: controller.signal });
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    // The tool keeps running and resolves ~200 ms later; nothing observes it and nothing crashes.
    await vi.waitFor(() => expect(calls.hangsSettled).toBe(before + 1), { timeout: 20_000 });
  });

  it('does not start a user tool once the signal has fired', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(call('greet', { who: 'x' }, { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});
