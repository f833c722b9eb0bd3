/**
 * The pure parts of the MCP client: the schema Ollama gets, results as text, profile selection,
 * `${VAR}` expansion, and the configuration (`mcp.servers`, `.mcp.json`) with its exit-2 errors.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { expandEnv } from '../../src/mcp/expand-env.js';
import { mcpToolName, type McpToolRef } from '../../src/mcp/mcp-tools.js';
import { ollamaSafeSchema } from '../../src/mcp/ollama-schema.js';
import { resultText } from '../../src/mcp/result-text.js';
import { selectMcpTools, unknownMcpServers } from '../../src/mcp/select.js';
import { mcpSecretEnv } from '../../src/cli/mcp-runtime.js';
import { createRedactor } from '../../src/tools/redact.js';

describe('ollamaSafeSchema', () => {
  it('keeps what Ollama keeps, inlines $ref, turns oneOf into anyOf and const into enum, merges allOf', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      $defs: { Mode: { type: 'string', enum: ['fast', 'slow'], description: 'how' } },
      properties: {
        mode: { $ref: '#/$defs/Mode' },
        kind: { oneOf: [{ const: 'a' }, { const: 'b' }] },
        limit: { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }], default: null, title: 'Limit' },
        tags: { type: 'array', items: { type: 'string', examples: ['x'] } },
        both: { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'number' } } }] },
      },
      required: ['mode'],
    };
    expect(ollamaSafeSchema(schema)).toEqual({
      type: 'object',
      properties: {
        mode: { type: 'string', enum: ['fast', 'slow'], description: 'how' },
        kind: { anyOf: [{ enum: ['a'] }, { enum: ['b'] }] },
        limit: { type: 'integer' },
        tags: { type: 'array', items: { type: 'string' } },
        both: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] },
      },
      required: ['mode'],
    });
  });

  it('always sends an object with properties, and stops at recursive references', () => {
    expect(ollamaSafeSchema({ type: 'object' })).toEqual({ type: 'object', properties: {} });
    const recursive = { type: 'object', properties: { node: { $ref: '#' } } };
    const out = JSON.stringify(ollamaSafeSchema(recursive));
    expect(out.length).toBeLessThan(500);
  });
});

describe('resultText', () => {
  it('text is the result; images, audio and binary resources are named, not dumped; isError fails', () => {
    const png = Buffer.alloc(3000, 7).toString('base64');
    expect(
      resultText({
        content: [
          { type: 'text', text: 'first' },
          { type: 'image', mimeType: 'image/png', data: png },
          { type: 'audio', mimeType: 'audio/wav', data: 'AAAA' },
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inside' } },
          { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AAAA', mimeType: 'application/zip' } },
          { type: 'resource_link', uri: 'file:///c', name: 'c' },
          { type: 'hologram' },
        ],
      }),
    ).toEqual({
      ok: true,
      output: [
        'first',
        '[image: image/png, 3000 bytes, not shown]',
        '[audio: audio/wav, 3 bytes, not shown]',
        '[resource file:///a.txt]\ninside',
        '[resource file:///b.bin: application/zip, 3 bytes, not shown]',
        '[resource link c: file:///c]',
        '[hologram content, not shown]',
      ].join('\n'),
    });
    expect(resultText({ content: [{ type: 'text', text: 'no such issue' }], isError: true })).toEqual({ ok: false, output: 'no such issue' });
    expect(resultText({ content: [], isError: true })).toEqual({ ok: false, output: '(the tool failed without a message)' });
    expect(resultText({ content: [], structuredContent: { n: 1 } })).toEqual({ ok: true, output: '{"n":1}' });
  });
});

describe('profile selection', () => {
  const refs: McpToolRef[] = [
    { name: 'mcp__github__list_issues', server: 'github', tool: 'list_issues' },
    { name: 'mcp__github__create_issue', server: 'github', tool: 'create_issue' },
    { name: 'mcp__db__query', server: 'db', tool: 'query' },
    { name: 'mcp__db__drop', server: 'db', tool: 'drop' },
  ];
  it.each([
    [undefined, ['mcp__github__list_issues', 'mcp__github__create_issue', 'mcp__db__query', 'mcp__db__drop']],
    [['*'], ['mcp__github__list_issues', 'mcp__github__create_issue', 'mcp__db__query', 'mcp__db__drop']],
    [[], []],
    [['github'], ['mcp__github__list_issues', 'mcp__github__create_issue']],
    [['db/query'], ['mcp__db__query']],
    [['db/query', 'github'], ['mcp__github__list_issues', 'mcp__github__create_issue', 'mcp__db__query']],
    [['db/missing'], []],
  ])('%j selects %j', (selection, expected) => {
    expect(selectMcpTools(selection, refs)).toEqual(expected);
  });

  it('names servers a profile lists that are not configured', () => {
    expect(unknownMcpServers(['github', 'db/query', 'jira/x', '*'], new Set(['github', 'db']))).toEqual(['jira']);
    expect(unknownMcpServers(undefined, new Set())).toEqual([]);
  });

  it('tool names follow mcp__<server>__<tool>, odd characters made plain', () => {
    expect(mcpToolName('github', 'list_issues')).toBe('mcp__github__list_issues');
    expect(mcpToolName('fs', 'read.file/v2')).toBe('mcp__fs__read_file_v2');
  });
});

describe('environment references', () => {
  it('expands ${NAME} and ${NAME:-default}; an unset variable without default is an error naming it', () => {
    const env = { TOKEN: 'abc123', EMPTY: '' };
    expect(expandEnv('Bearer ${TOKEN}', env, 'headers.Authorization')).toBe('Bearer abc123');
    expect(expandEnv('${MISSING:-fallback}/${EMPTY:-x}', env, 'url')).toBe('fallback/x');
    expect(() => expandEnv('${MISSING}', env, 'headers.Authorization')).toThrow('headers.Authorization references ${MISSING}, which is not set');
  });

  it('header values and secret-named env values of servers are redacted from tool output', () => {
    const config = loadConfig({ cwd: os.tmpdir(), env: {}, home: '/nonexistent', configFile: writeTemp({ mcp: { servers: { gh: { url: 'https://x.test/mcp', headers: { Authorization: 'Bearer ${GH_PAT}' } }, db: { command: 'db-mcp', env: { DB_PASSWORD: 'hunter2-long' } } } } }) }).config;
    const env = { GH_PAT: 'ghp_secretvalue123' };
    const redact = createRedactor({ ...env, ...mcpSecretEnv(config, env) });
    expect(redact('token ghp_secretvalue123 and hunter2-long')).not.toMatch(/ghp_secretvalue123|hunter2-long/);
  });
});

function writeTemp(value: unknown, name = 'config.json'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-mcp-cfg-'));
  onTestFinished(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(value));
  return file;
}

describe('configuration', () => {
  const load = (cwd: string, configFile?: string) => loadConfig({ cwd, env: {}, home: '/nonexistent', ...(configFile ? { configFile } : {}) });

  it('reads mcpServers from the project .mcp.json; the project config file replaces a server of the same name whole', () => {
    const dir = path.dirname(writeTemp({ mcpServers: { fs: { command: 'npx', args: ['-y', 'server-fs', '.'], cwd: 'sub' }, web: { type: 'http', url: 'http://127.0.0.1:1/mcp' } }, other: 1 }, '.mcp.json'));
    fs.writeFileSync(path.join(dir, '.nav-config.json'), JSON.stringify({ mcp: { servers: { web: { url: 'http://127.0.0.1:2/mcp', headers: { 'X-Key': '${KEY}' } } }, call_timeout_s: 5 } }));
    const { mcp } = load(dir).config;
    expect(mcp.call_timeout_s).toBe(5);
    expect(mcp.servers.fs).toEqual({ command: 'npx', args: ['-y', 'server-fs', '.'], cwd: path.join(dir, 'sub') });
    expect(mcp.servers.web).toEqual({ url: 'http://127.0.0.1:2/mcp', headers: { 'X-Key': '${KEY}' } });
  });

  it.each([
    [{ mcpServers: { gh: {} } }, /\.mcp\.json: mcpServers\.gh: must be an object with "command" \(a stdio server\) or "url"/],
    [{ mcpServers: { gh: { command: 'x', url: 'http://y' } } }, /mcpServers\.gh: has both "command" and "url"/],
    [{ mcpServers: { gh: { command: 'x', args: 'one two' } } }, /mcpServers\.gh\.args: must be an array of strings/],
    [{ mcpServers: { gh: { url: 'ftp://x' } } }, /mcpServers\.gh\.url: must be an http:\/\/ or https:\/\/ URL/],
    [{ mcpServers: { gh: { url: 'http://x', headers: { A: 1 } } } }, /mcpServers\.gh\.headers\.A: must be a string/],
    [{ mcpServers: { gh: { command: 'x', comand: 'y' } } }, /mcpServers\.gh\.comand: unknown key \(allowed: type, command, args, env, cwd, enabled, timeout_s\)/],
    [{ mcpServers: { 'bad name': { command: 'x' } } }, /mcpServers\.bad name: server names are letters, digits/],
    [{ mcpServers: { gh: { type: 'sse', url: 'http://x' } } }, /mcpServers\.gh\.type: must be "http" for a server with a url \(SSE-only servers are not supported\)/],
    [{ mcpServers: [] }, /\.mcp\.json: mcpServers: must be an object of servers by name/],
  ])('a bad .mcp.json entry is exit 2 naming the file and key: %j', (content, message) => {
    const dir = path.dirname(writeTemp(content, '.mcp.json'));
    let error: unknown;
    try {
      load(dir);
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ exitCode: 2, code: 'config_invalid' });
    expect((error as Error).message).toMatch(message);
  });

  it('a bad mcp block in .nav-config.json names that file', () => {
    const file = writeTemp({ mcp: { servers: { gh: { command: '' } }, startup_timeout_s: -1 } });
    expect(() => load(path.dirname(file), file)).toThrow(/config\.json: mcp\.servers\.gh\.command: must be a non-empty string.*mcp\.startup_timeout_s: must be a positive number of seconds/);
  });
});
