/**
 * End to end: `llm.keep_alive` from a config file reaches Ollama's `/api/chat` body in the form
 * the real server binds (api/types.go `(*Duration).UnmarshalJSON`): a bare integer as a JSON
 * number, a Go duration as a string.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, scenario } from '../scenario/helpers.js';

forEachBackend(
  (backend) => {
    it.each<[unknown, string | number]>([
      ['-1', -1],
      [3600, 3600],
      ['1h30m', '1h30m'],
    ])('keep_alive %j is sent as %j', async (value, wire) => {
      const s = await scenario(backend, { turns: [{ content: 'hello' }] });
      fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ llm: { keep_alive: value } }));
      const run = await s.navi(['run', 'say hello']);
      expect(run.code, describeRun(run)).toBe(0);
      const chats = s.chats();
      expect(chats.length).toBeGreaterThan(0);
      for (const chat of chats) expect(chat.body?.keep_alive).toBe(wire);
    }, SCENARIO_TIMEOUT_MS);

    it('a keep_alive Ollama would refuse is an exit-2 config error naming the key and the allowed forms', async () => {
      const s = await scenario(backend, { turns: [] });
      fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ llm: { keep_alive: '1d' } }));
      const run = await s.navi(['run', 'say hello']);
      expect(run.code, describeRun(run)).toBe(2);
      expect(run.stderr).toContain('llm.keep_alive: must be a number of seconds');
      expect(run.stderr).toContain('(got "1d")');
      expect(s.chats()).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);
  },
);
