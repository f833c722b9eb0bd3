/**
 * What reaches a terminal in text mode (issue: terminal escapes). A hostile model sends escape
 * sequences in its answer (an OSC 52 clipboard write, a title change, clear-screen, a `\r` that
 * rewrites the line), in a shell command that the deny list stops (the `shell_denied` warning
 * quotes it) and in a fact it remembers. Text mode, `navi sessions show` and `navi memory list`
 * print the text without them; stream-json and `-o json` still carry them, JSON-escaped (C1
 * controls and DEL too, which JSON.stringify would leave raw).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { describeRun, eventsOf, expectValidStream, LONG_SCENARIO_TIMEOUT_MS, resultOf, scenario } from '../scenario/helpers.js';

const ESC = '\u001b';
const BEL = '\u0007';
const CLIPBOARD = `${ESC}]52;c;cm0gLXJmIH4=${BEL}`;
const TITLE = `${ESC}]0;navi-pwned${ESC}\\`;
const CLEAR = `${ESC}[2J${ESC}[H`;
const ANSWER = `All clean.${CLIPBOARD}${TITLE}${CLEAR} Really\u009b31m.\rOK`;
const COMMAND = `touch evil${CLIPBOARD}; echo ${TITLE}`;
const FACT = `The user likes ${CLEAR}colours${CLIPBOARD}`;

/** Control characters other than \n and \t: none may reach a terminal. */
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const SCRIPT: FakeScript = {
  turns: [
    {
      tool_calls: [
        { name: 'shell', arguments: { command: COMMAND } },
        { name: 'remember', arguments: { fact: FACT } },
      ],
    },
    { content: ANSWER },
  ],
  on_exhausted: 'error',
};

forEachBackend((backend) => {
  describe('terminal escapes', () => {
    it('text mode, sessions show and memory list print the model text without control sequences; JSON keeps them escaped', async () => {
      const s = await scenario(backend, SCRIPT);
      fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), JSON.stringify({ tools: { shell: { deny: ['touch *'] } } }));
      const text = await s.navi(['run', 'say something'], { ci: false });
      expect(text.code, describeRun(text)).toBe(0);
      expect(text.stdout).toBe('All clean. Really.OK\n');
      expect(text.stderr).toMatch(/^warning: shell command denied: .*touch evil; echo/m);
      expect(CONTROLS.test(text.stdout), 'controls on stdout').toBe(false);
      expect(CONTROLS.test(text.stderr), 'controls on stderr').toBe(false);
      expect(fs.existsSync(path.join(s.cwd, 'evil'))).toBe(false);

      // -o json: the warning is a stderr line for people, the result is JSON.
      s.fake.setScript(SCRIPT);
      const json = await s.navi(['run', '-o', 'json', 'again']);
      expect(json.code, describeRun(json)).toBe(0);
      expect(CONTROLS.test(json.stderr), 'controls on stderr in -o json').toBe(false);
      expect(CONTROLS.test(json.stdout), 'raw controls in JSON').toBe(false);
      expect(resultOf(json).result).toBe(ANSWER);

      // stream-json: everything is JSON, the sequences arrive escaped and whole.
      s.fake.setScript(SCRIPT);
      const stream = await s.navi(['run', '-o', 'stream-json', 'once more']);
      expect(stream.code, describeRun(stream)).toBe(0);
      const events = expectValidStream(stream);
      expect(CONTROLS.test(stream.stdout), 'raw controls in stream-json').toBe(false);
      expect(eventsOf(events, 'text_delta').map((e) => String(e.text)).join('')).toBe(ANSWER);
      const sessionId = String(resultOf(stream).session_id);

      const shown = await s.navi(['sessions', 'show', sessionId], { host: false });
      expect(shown.code, describeRun(shown)).toBe(0);
      expect(CONTROLS.test(shown.stdout), 'controls in sessions show').toBe(false);
      expect(shown.stdout).toContain('All clean. Really.OK');
      const shownJson = await s.navi(['sessions', 'show', sessionId, '-o', 'json'], { host: false });
      expect(CONTROLS.test(shownJson.stdout), 'raw controls in sessions show -o json').toBe(false);
      expect(JSON.stringify(JSON.parse(shownJson.stdout))).toContain(JSON.stringify(ANSWER).slice(1, -1));

      const memories = await s.navi(['memory', 'list'], { host: false });
      expect(memories.code, describeRun(memories)).toBe(0);
      expect(memories.stdout).toContain('The user likes colours');
      expect(CONTROLS.test(memories.stdout), 'controls in memory list').toBe(false);
    }, LONG_SCENARIO_TIMEOUT_MS);
  });
});
