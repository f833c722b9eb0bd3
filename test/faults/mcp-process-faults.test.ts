/**
 * No MCP server outlives navi (issue 12): every server runs in its own process group, and the
 * group — a grandchild the server started included — is gone however navi ends: a normal end,
 * SIGINT or SIGTERM during a call, a second SIGINT that exits at once, a loop's budget end.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import type { FakeScript } from '../support/fake-ollama.js';
import { loopRepo, tc, say } from '../loop-scenario/helpers.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectCleanExit, expectValidStream, liveGroupMembers, resultOf, scenario, until, type Scenario } from './helpers.js';

const TEST_SERVER = path.join(REPO_ROOT, 'test', 'support', 'mcp-test-server.js');

/** Configures the test server to append its pid and its children's to `pids` in the working directory. */
function configure(s: Scenario): string {
  const pidFile = path.join(s.cwd, 'pids');
  fs.writeFileSync(path.join(s.cwd, '.mcp.json'), JSON.stringify({ mcpServers: { t: { command: process.execPath, args: [TEST_SERVER, '--pid-file', pidFile] } } }));
  // A failing test must not leave its own processes behind (each killed by its recorded pid).
  onTestFinished(() => {
    for (const pid of pids(pidFile)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already: the expected case
      }
    }
  });
  return pidFile;
}

function pids(file: string): number[] {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The server (first pid) and everything in its group are gone; so is every pid it recorded. */
async function expectAllGone(file: string): Promise<void> {
  const recorded = pids(file);
  expect(recorded.length, 'the server and its child recorded their pids').toBeGreaterThanOrEqual(2);
  // navi waits for its servers before it exits; the poll only absorbs /proc's view catching up.
  await until(() => recorded.every((pid) => !alive(pid)), 5_000, `server processes ${recorded.join(', ')} to be gone`);
  expect(liveGroupMembers(recorded[0] ?? -1)).toEqual([]);
}

const SPAWN_THEN_WAIT: FakeScript = {
  turns: [{ tool_calls: [{ name: 'mcp__t__spawn_child', arguments: {} }, { name: 'mcp__t__slow', arguments: { ms: 600_000 } }] }, { content: 'never reached' }],
  on_exhausted: 'error',
};

forEachBackend((backend) => {
  describe('MCP server processes never outlive navi', () => {
    it('normal end: the server and its grandchild are stopped before navi exits', async () => {
      const s = await scenario(backend, { turns: [{ tool_calls: [{ name: 'mcp__t__spawn_child', arguments: {} }] }, { content: 'done' }], on_exhausted: 'error' });
      const file = configure(s);
      const run = await s.navi(['run', '-o', 'json', 'start a child']);
      expect(run.code, describeRun(run)).toBe(0);
      await expectAllGone(file);
    }, SCENARIO_TIMEOUT_MS);

    for (const signals of [['SIGINT'], ['SIGTERM'], ['SIGINT', 'SIGINT']] as const) {
      it(`${signals.join(' + ')} during an MCP call: exit 130, the server's whole process group gone`, async () => {
        const s = await scenario(backend, SPAWN_THEN_WAIT);
        const file = configure(s);
        const proc = s.start(['run', '-o', 'stream-json', 'wait for it']);
        await proc.waitForEvent('tool_started', (ev) => ev.name === 'mcp__t__slow');
        await until(() => pids(file).length >= 2, 30_000, 'the grandchild');
        for (const sig of signals) proc.kill(sig);
        const run = await proc.result;
        expectCleanExit(run, [130]);
        if (signals.length === 1) {
          const events = expectValidStream(run);
          expect(eventsOf(events, 'tool_call').map((e) => [e.name, e.ok])).toEqual([
            ['mcp__t__spawn_child', true],
            ['mcp__t__slow', false],
          ]);
          expect(resultOf(run)).toMatchObject({ status: 'interrupted', exit_code: 130 });
        }
        await expectAllGone(file);
      }, SCENARIO_TIMEOUT_MS);
    }

    it('a loop that runs out of budget (exit 5) stops its servers', async () => {
      const s = await scenario(backend, { turns: [tc('mcp__t__spawn_child', {}), say('I started a helper.')], on_exhausted: 'error' });
      loopRepo(s.cwd, { extra: 'budget: { max_tokens: 100 }' });
      const file = configure(s);
      const run = await s.navi(['loop', 'task.yaml', '-o', 'json']);
      expect(run.code, describeRun(run)).toBe(5);
      expect(JSON.parse(run.stdout)).toMatchObject({ status: 'budget_exhausted' });
      await expectAllGone(file);
    }, SCENARIO_TIMEOUT_MS);
  });
});
