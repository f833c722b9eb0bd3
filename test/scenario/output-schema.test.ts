/**
 * `--output-schema FILE` (issue 11): the tool loop runs without `format`; the final answer is
 * then asked for with the schema as Ollama's `format`, checked with ajv, returned in
 * `result.structured`; a mismatch is asked again once, then exit 1 with the problems. The fake
 * Ollama checks every reply against what `format` allows (fake-ollama-format.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { SCENARIO_TIMEOUT_MS, describeRun, expectFailure, expectJsonResult, expectValidStream, requestMessages, resultOf, scenario, withoutTransient, writeFiles } from './helpers.js';

const SCHEMA = {
  type: 'object',
  properties: {
    files: { type: 'array', items: { type: 'string' }, uniqueItems: true },
    count: { type: 'integer' },
  },
  required: ['files', 'count'],
  additionalProperties: false,
};

const GOOD = '{"files":["a.txt","b.txt"],"count":2}';

/** A tool turn, the prose answer, then the structured answer (and `extra` turns after it). */
function script(...structured: string[]): FakeScript {
  return {
    turns: [
      { thinking: 'List the directory.', tool_calls: [{ name: 'list_dir', arguments: {} }] },
      { content: 'There are two files, a.txt and b.txt.' },
      ...structured.map((content) => ({ thinking: 'Put it in the shape asked for.', content })),
    ],
    on_exhausted: 'error',
  };
}

forEachBackend((backend) => {
  describe('--output-schema', () => {
    it('the final answer comes with the schema as format, after the tool loop ran without it; result.structured holds it', async () => {
      const s = await scenario(backend, script(GOOD));
      writeFiles(s.cwd, { 'a.txt': 'a', 'b.txt': 'b', 'answer.schema.json': JSON.stringify(SCHEMA) });
      const run = await s.navi(['run', '-o', 'stream-json', '--output-schema', 'answer.schema.json', 'which files are here?']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const result = resultOf(run);
      expect(result).toMatchObject({ status: 'success', reason: 'completed', result: GOOD, structured: { files: ['a.txt', 'b.txt'], count: 2 }, num_turns: 3 });
      expect(events.filter((e) => e.type === 'warning')).toEqual([]);
      const chats = s.chats();
      expect(chats).toHaveLength(3);
      // Tools stay offered in every call (the same prompt prefix for Ollama's cache); only the last has format.
      expect(chats.map((c) => 'format' in (c.body ?? {}))).toEqual([false, false, true]);
      expect(chats[2]?.body?.format).toEqual(SCHEMA);
      expect(chats[2]?.body?.tools).toEqual(chats[0]?.body?.tools);
      // The request asks for the shape in words too, after the prose answer.
      const last = requestMessages(chats[2]);
      const answerAt = last.findIndex((m) => m.role === 'assistant' && m.content === 'There are two files, a.txt and b.txt.');
      expect(answerAt, JSON.stringify(last.slice(-3))).toBeGreaterThan(0);
      expect(last[answerAt + 1]?.role).toBe('user');
      expect(String(last[answerAt + 1]?.content)).toContain('"uniqueItems": true');
      // The earlier request is a prefix of this one, minus its transient last message (SPEC §8).
      expect(last.slice(0, requestMessages(chats[1]).length - 1)).toEqual(withoutTransient(requestMessages(chats[1])).map((m) => m));
      expect(last.filter((m) => m.role === 'system')).toHaveLength(1);
      expect(s.fake.mismatches).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('text mode prints the JSON alone on stdout, not the prose answer before it', async () => {
      const s = await scenario(backend, script(GOOD));
      writeFiles(s.cwd, { 'a.txt': 'a', 'b.txt': 'b', 's.json': JSON.stringify(SCHEMA) });
      const run = await s.navi(['run', '--output-schema', 's.json', 'which files are here?']);
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.stdout).toBe(`${GOOD}\n`);
      expect(s.fake.mismatches).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('an answer that breaks the schema is asked for again once, with the problems, then accepted', async () => {
      // uniqueItems is not enforced by the grammar (llama.cpp json-schema-to-grammar): a real model can break it.
      const s = await scenario(backend, script('{"files":["a.txt","a.txt"],"count":2}', GOOD));
      writeFiles(s.cwd, { 'a.txt': 'a', 'b.txt': 'b', 's.json': JSON.stringify(SCHEMA) });
      const run = await s.navi(['run', '-o', 'stream-json', '--output-schema', 's.json', 'which files are here?']);
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      expect(events.filter((e) => e.type === 'warning').map((e) => e.code)).toEqual(['output_schema_mismatch']);
      expect(resultOf(run)).toMatchObject({ status: 'success', structured: { files: ['a.txt', 'b.txt'], count: 2 } });
      const retry = requestMessages(s.chats()[3]);
      expect(String(retry.at(-1)?.content)).toMatch(/does not match the JSON Schema:\n- files: must NOT have duplicate items/);
      expect(s.chats()[3]?.body?.format).toEqual(SCHEMA);
      expect(s.fake.mismatches).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('two answers that break the schema: exit 1, reason output_schema_mismatch, the problems in errors', async () => {
      const bad = '{"files":["a.txt","a.txt"],"count":2}';
      const s = await scenario(backend, script(bad, bad));
      writeFiles(s.cwd, { 'a.txt': 'a', 's.json': JSON.stringify(SCHEMA) });
      const run = await s.navi(['run', '-o', 'json', '--output-schema', 's.json', 'which files are here?']);
      const result = expectJsonResult(run, 'error', 'output_schema_mismatch');
      expect(run.code).toBe(1);
      expect(result.structured).toBeUndefined();
      expect((result.errors as string[]).join('\n')).toMatch(/does not match --output-schema after 2 attempts: files: must NOT have duplicate items/);
      expect(s.chats()).toHaveLength(4);
      expect(s.fake.mismatches).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('text mode: the mismatch is one line on stderr (the retry warning aside), not the same message twice', async () => {
      const bad = '{"files":["a.txt","a.txt"],"count":2}';
      const s = await scenario(backend, script(bad, bad));
      writeFiles(s.cwd, { 'a.txt': 'a', 's.json': JSON.stringify(SCHEMA) });
      const run = await s.navi(['run', '--output-schema', 's.json', 'which files are here?']);
      expect(run.code, describeRun(run)).toBe(1);
      const lines = run.stderr.split('\n').filter((l) => l !== '');
      expect(lines.filter((l) => l.includes('after 2 attempts')), run.stderr).toEqual([
        'navi: the answer does not match --output-schema after 2 attempts: files: must NOT have duplicate items (items ## 1 and 0 are identical)',
      ]);
      expect(lines.filter((l) => !l.startsWith('warning: '))).toHaveLength(1);
    }, SCENARIO_TIMEOUT_MS);

    it('a schema file that is missing, not JSON or not a JSON Schema is exit 2 naming it, before any model call or database', async () => {
      const s = await scenario(backend, script(GOOD));
      writeFiles(s.cwd, { 'bad.json': '{"type": "object",', 'odd.json': '{"type": "objekt"}' });
      const dataDir = path.join(s.cwd, 'no-db');
      const env = { NAVI_DATA_DIR: dataDir };
      expectFailure(await s.navi(['run', '--output-schema', 'missing.json', 'x'], { env }), 2, /--output-schema missing\.json: file not found/);
      expectFailure(await s.navi(['run', '--output-schema', 'bad.json', 'x'], { env }), 2, /--output-schema bad\.json: not valid JSON/);
      expectFailure(await s.navi(['run', '--output-schema', 'odd.json', 'x'], { env }), 2, /--output-schema odd\.json: schema\.type/);
      expect(s.chats()).toHaveLength(0);
      if (backend.kind === 'pglite') expect(fs.existsSync(dataDir)).toBe(false);
    }, SCENARIO_TIMEOUT_MS);
  });
});
