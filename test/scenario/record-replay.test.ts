/**
 * `--record` / `--replay` with the built CLI (issue: CI-grade navi). A run with thinking, tools
 * and a sub-agent is recorded against the fake Ollama; the fake is stopped and the replay gives
 * the same events and exit code; after the profile's prompt is edited the replay fails with
 * exit 2 naming the first request that differs and showing the change. Secrets stay out of the
 * file. Bad flag combinations and files are exit 2 before anything opens.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runNavi, type JsonObject } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { describeRun, expectFailure, expectValidStream, LONG_SCENARIO_TIMEOUT_MS, scenario, SCENARIO_TIMEOUT_MS, tempDir, writeFiles } from './helpers.js';

const SECRET = 'sk-test-9f8e7d6c5b4a3210';

/** Events without what differs between two runs of the same exchange: times, ids, durations. */
function comparable(events: readonly JsonObject[]): JsonObject[] {
  return events.map((e) => {
    const { ts: _ts, session_id: _s, duration_ms: _d, ...rest } = e;
    return rest;
  });
}

forEachBackend(
  (backend) => {
    describe('record and replay', () => {
      it(
        'records a run with a sub-agent, replays it with the fake stopped (same events, same exit code), and fails with the diff after the profile prompt changes',
        async () => {
          const s = await scenario(backend, {
            turns: [
              { thinking: 'Look at the notes, and ask a helper to check the other file.', tool_calls: [{ name: 'read_file', arguments: { path: 'notes.md' } }] },
              { thinking: 'Delegate.', tool_calls: [{ name: 'spawn_agent', arguments: { task: 'Read todo.md and say how many items it has.', profile_id: 'researcher' } }] },
              { tool_calls: [{ name: 'read_file', arguments: { path: 'todo.md' } }] },
              { content: 'todo.md has 2 items.' },
              { thinking: 'All together now.', content: 'Notes: release on Friday. todo.md has 2 items.' },
            ],
          });
          writeFiles(s.cwd, {
            'notes.md': 'Release on Friday.\n',
            'todo.md': '- one\n- two\n',
            'profiles/helper/config.json': JSON.stringify({ description: 'a project profile', tools: { agent: ['read_file', 'spawn_agent'], subagent: ['read_file'] } }),
            'profiles/helper/system_prompt.txt': 'You are a careful helper. Answer in one line.\n',
          });
          const args = ['run', '-p', 'helper', '-o', 'stream-json', `Summarise the notes (key ${SECRET}).`];
          const env = { MY_API_KEY: SECRET };

          const recorded = await s.navi([...args, '--record', 'rec.jsonl'], { env });
          expect(recorded.code, describeRun(recorded)).toBe(0);
          const file = fs.readFileSync(path.join(s.cwd, 'rec.jsonl'), 'utf8');
          expect(file.split('\n')[0]).toMatch(/^\{"type":"header","format":"navi-recording","version":1,/);
          expect(file).not.toContain(SECRET);
          expect(file).toContain('[REDACTED:MY_API_KEY]');
          expect(file.match(/"type":"exchange"/g)?.length).toBeGreaterThanOrEqual(5);

          await s.fake.close();
          const chatsBefore = s.chats().length;
          const replayed = await s.navi([...args, '--replay', 'rec.jsonl'], { env });
          expect(replayed.code, describeRun(replayed)).toBe(0);
          expect(s.chats()).toHaveLength(chatsBefore);
          expect(comparable(expectValidStream(replayed))).toEqual(comparable(expectValidStream(recorded)));
          expect(replayed.events.some((e) => e.is_subagent === true)).toBe(true);

          // Honouring the recorded timing changes nothing but the pace.
          const timed = await s.navi([...args, '--replay', 'rec.jsonl', '--replay-timing'], { env });
          expect(timed.code, describeRun(timed)).toBe(0);
          expect(comparable(timed.events)).toEqual(comparable(recorded.events));

          // The profile's prompt is edited: the first model call differs, exit 2 with the diff.
          fs.writeFileSync(path.join(s.cwd, 'profiles/helper/system_prompt.txt'), 'You are a careful helper. Answer in two lines.\n');
          const edited = await s.navi([...args.filter((a) => a !== 'stream-json' && a !== '-o'), '--replay', 'rec.jsonl'], { env });
          expectFailure(edited, 2, /--replay rec\.jsonl: model call 1 \(request \d+, POST \/api\/chat\) differs from the one recorded at line \d+:/);
          expect(edited.stderr).toMatch(/message 0 \(system\) content differs at character \d+ \(its line \d+\):/);
          expect(edited.stderr).toMatch(/recorded: …".*Answer in one line\."/);
          expect(edited.stderr).toMatch(/now: {6}…".*Answer in two lines\."/);
          expect(edited.stderr).toContain('If the change is intended, record again: --record rec.jsonl');
        },
        LONG_SCENARIO_TIMEOUT_MS,
      );

      it(
        'a run that failed is replayed failing the same way: exit 75 when Ollama stopped answering',
        async () => {
          const s = await scenario(backend, { turns: [{ content: 'partial', drop_after_chunks: 1 }] });
          const recorded = await s.navi(['run', '-o', 'json', 'hello', '--record', 'rec.jsonl']);
          expect(recorded.code, describeRun(recorded)).toBe(75);
          await s.fake.close();
          const replayed = await s.navi(['run', '-o', 'json', 'hello', '--replay', 'rec.jsonl']);
          expect(replayed.code, describeRun(replayed)).toBe(75);
          const a = JSON.parse(recorded.stdout) as JsonObject;
          const b = JSON.parse(replayed.stdout) as JsonObject;
          expect([b.status, b.reason, b.errors]).toEqual([a.status, a.reason, a.errors]);
        },
        SCENARIO_TIMEOUT_MS,
      );
    });
  },
);

describe('record and replay flags', () => {
  it(
    'bad combinations and files are exit 2 naming the flag or the file, before any database is created',
    async () => {
      const cwd = tempDir('flags');
      const dataDir = path.join(cwd, 'never-created');
      const env = cleanEnv({ NAVI_DATA_DIR: dataDir, OLLAMA_HOST: 'http://127.0.0.1:9' });
      fs.writeFileSync(path.join(cwd, 'old.jsonl'), '{"type":"header","format":"navi-recording","version":7}\n');
      fs.writeFileSync(path.join(cwd, 'junk.jsonl'), 'hello\n');
      const cases: Array<[string[], RegExp]> = [
        [['run', 'hi', '--record', 'a.jsonl', '--replay', 'b.jsonl'], /--record and --replay exclude each other/],
        [['run', 'hi', '--replay-timing'], /--replay-timing only applies with --replay FILE/],
        [['run', 'hi', '--replay', 'missing.jsonl'], /--replay missing\.jsonl: cannot read it \(ENOENT/],
        [['run', 'hi', '--replay', 'old.jsonl'], /--replay old\.jsonl: line 1: recording format version 7; this navi reads version 1/],
        [['run', 'hi', '--replay', 'junk.jsonl'], /--replay junk\.jsonl: line 1: not JSON/],
        [['run', 'hi', '--record', 'no/such/dir/rec.jsonl'], /--record no\/such\/dir\/rec\.jsonl: cannot write it \(ENOENT/],
        // A missing folder is made (issue 18, item 16); one that cannot be (a file in the way) is exit 2.
        [['loop', 'do it', '--junit', 'junk.jsonl/j.xml'], /--junit junk\.jsonl\/j\.xml: cannot make its folder .*junk\.jsonl \((EEXIST|ENOTDIR)/],
      ];
      for (const [args, pattern] of cases) {
        const run = await runNavi(args, { cwd, env });
        expectFailure(run, 2, pattern);
      }
      expect(fs.existsSync(dataDir)).toBe(false);
    },
    LONG_SCENARIO_TIMEOUT_MS,
  );
});
