/**
 * Binary input (issue 18, item 4): `head -c 3000 /bin/ls | navi run` once called the model,
 * printed its answer, then failed to store the session (`invalid byte sequence … 0x00`, exit 1).
 * Binary stdin or `--file` is refused before any model call (exit 2); NUL the model writes (a
 * sub-agent's task) is stored safely. A prompt argument cannot hold NUL (execve ends it there).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, expectFailure, expectJsonResult, scenario } from './helpers.js';

/** The start of an ELF executable, as `head -c` of one gives it. */
const ELF = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0xe8, 0xff]), Buffer.from('/lib64/ld-linux-x86-64.so.2\u0000libc.so.6\u0000')]);

forEachBackend((backend) => {
  describe('binary input', () => {
    it('binary stdin: exit 2 "stdin is binary", no model call', async () => {
      const s = await scenario(backend, { turns: [{ content: 'It is an ELF file.' }], on_exhausted: 'error' });
      const run = await s.navi(['run'], { stdin: ELF });
      expectFailure(run, 2, /stdin is binary/);
      expect(run.stdout).toBe('');
      expect(s.chats()).toHaveLength(0);
    }, SCENARIO_TIMEOUT_MS);

    it('binary stdin beside a prompt argument, json mode: one invalid_input result', async () => {
      const s = await scenario(backend, { turns: [{ content: 'It is an ELF file.' }], on_exhausted: 'error' });
      const run = await s.navi(['run', '-o', 'json', 'what is this?'], { stdin: ELF });
      expect(run.code, describeRun(run)).toBe(2);
      const result = expectJsonResult(run, 'invalid_input', 'input_binary');
      expect(String((result.errors as string[])[0])).toMatch(/stdin is binary/);
      expect(s.chats()).toHaveLength(0);
    }, SCENARIO_TIMEOUT_MS);

    it('--file of a binary file: exit 2 naming the file', async () => {
      const s = await scenario(backend, { turns: [{ content: 'It is an ELF file.' }], on_exhausted: 'error' });
      fs.writeFileSync(path.join(s.cwd, 'prog.bin'), ELF);
      const run = await s.navi(['run', '--file', 'prog.bin']);
      expectFailure(run, 2, /--file prog\.bin is binary/);
      expect(s.chats()).toHaveLength(0);
    }, SCENARIO_TIMEOUT_MS);

    it('Latin-1 text on stdin (invalid UTF-8, no NUL) is still a prompt', async () => {
      const s = await scenario(backend, { turns: [{ content: 'Bonjour.' }], on_exhausted: 'error' });
      const run = await s.navi(['run'], { stdin: Buffer.from('dis bonjour, café\n', 'latin1') });
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.stdout).toBe('Bonjour.\n');
    }, SCENARIO_TIMEOUT_MS);

    it('a sub-agent task with NUL in it (the model wrote it) is stored, the run succeeds', async () => {
      const s = await scenario(
        backend,
        {
          turns: [
            { tool_calls: [{ name: 'spawn_agent', arguments: { task: 'say hi\u0000 please', profile_id: 'researcher' } }] },
            { content: 'hi' },
            { content: 'The helper said hi.' },
          ],
          on_exhausted: 'error',
        },
      );
      const run = await s.navi(['run', '-o', 'json', 'ask a helper to say hi']);
      expect(run.code, describeRun(run)).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: 'success', result: 'The helper said hi.' });
    }, SCENARIO_TIMEOUT_MS);
  });
});
