/**
 * Does navi work on this Node version? (issue 40.) Every top-level command (`COMMANDS` in
 * src/cli/shorthand.ts) does its cheapest real job once, as a user runs it: the built CLI,
 * spawned with the Node that runs vitest (`process.execPath`, test/support/cli.ts), so
 * `"$N24" node_modules/vitest/vitest.mjs run` runs navi itself on Node 24; the fake Ollama over
 * real HTTP; the store on each backend (PGlite always, PostgreSQL with DATABASE_URL). Part of
 * `npm test` and of the compat tier (`NAVI_TIER=compat`, what .ci/run runs on Node 24 too).
 * Cheap on purpose: about one process per command, nothing asserted that a user would not expect.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { validateEvent } from '../../src/agent/events.js';
import { COMMANDS } from '../../src/cli/shorthand.js';
import { REPO_ROOT, cleanEnv, runNavi, stackLines, type NaviResult } from '../support/cli.js';
import { forEachBackend } from '../support/databases.js';
import { fakeOllama } from '../support/fake-ollama-harness.js';
import { ADMIN_URL, addJob, freshDatabase, listJobs, queueEnv, startWorker, taskRepo, workerEvents } from '../queue/helpers.js';
import { LONG_SCENARIO_TIMEOUT_MS, SCENARIO_TIMEOUT_MS, describeRun, scenario, tempDir, writeFiles } from '../scenario/helpers.js';
import { serve } from '../serve/helpers.js';

/** The commands a test below runs (the first word of its name); the guard keeps it equal to COMMANDS. */
const SMOKED = ['run', 'loop', 'tasks', 'runs', 'sessions', 'profiles', 'memory', 'mcp', 'db', 'doctor', 'init', 'completion', 'queue', 'worker', 'serve'];

const TEST_SERVER = path.join(REPO_ROOT, 'test', 'support', 'mcp-test-server.js');
const FACT = 'The smoke test prefers tabs.';

/** The queue tests' git repository (a task whose check commits, so plain answers pass the gate), removed after the test. */
function loopRepo(): string {
  const repo = taskRepo();
  onTestFinished(() => fs.rmSync(repo, { recursive: true, force: true }));
  return repo;
}

/** Exit 0, no stack trace, and stdout one JSON object (returned). */
function jsonOf(run: NaviResult): Record<string, unknown> {
  expect(run.code, describeRun(run)).toBe(0);
  expect(stackLines(run.stderr), 'no stack trace on stderr').toEqual([]);
  expect(run.lines, `one JSON line on stdout: ${run.stdout}`).toHaveLength(1);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

/** A `result` object (json output) that passes the published schema. */
function expectResult(result: Record<string, unknown>, fields: Record<string, unknown>): void {
  expect(validateEvent(result)).toEqual([]);
  expect(result).toMatchObject({ type: 'result', ...fields });
}

it('the smoke set covers every top-level command', () => {
  expect([...SMOKED].sort()).toEqual([...COMMANDS].sort());
});

describe('smoke: commands that need no database and no model', () => {
  /** A working directory, and a database path that must stay nonexistent. */
  const noDatabase = (): { cwd: string; dataDir: string; env: Record<string, string> } => {
    const cwd = tempDir('smoke');
    const dataDir = path.join(tempDir('smoke-nodb'), 'never-created');
    return { cwd, dataDir, env: cleanEnv({ NAVI_DATA_DIR: dataDir, OLLAMA_HOST: 'http://127.0.0.1:9' }) };
  };

  it(
    'init in an empty directory; tasks list and profiles list see what it wrote',
    async () => {
      const f = noDatabase();
      const init = jsonOf(await runNavi(['init', '-o', 'json'], { cwd: f.cwd, env: f.env }));
      expect(init).toEqual({ created: ['.nav-config.json', 'profiles/my-agent/config.json', 'profiles/my-agent/system_prompt.txt', 'tasks/example.yaml'], skipped: [] });

      const tasks = jsonOf(await runNavi(['tasks', 'list', '-o', 'json'], { cwd: f.cwd, env: f.env })).tasks as Array<Record<string, unknown>>;
      expect(tasks.find((t) => t.file === 'tasks/example.yaml')).toMatchObject({ valid: true, problems: [] });

      const profiles = jsonOf(await runNavi(['profiles', 'list', '-o', 'json'], { cwd: f.cwd, env: f.env }));
      expect(profiles.default_profile).toBe('default');
      expect((profiles.profiles as Array<{ id: string }>).map((p) => p.id)).toEqual(expect.arrayContaining(['default', 'coder', 'my-agent']));
      expect(fs.existsSync(f.dataDir)).toBe(false);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'on a Node.js older than it supports, any command says which versions it needs: exit 1, nothing else runs',
    async () => {
      const f = noDatabase();
      // A preload that makes this Node report 18.20.4 (src/cli/node-support.cjs decides; unit-tested).
      const preload = path.join(f.cwd, 'node-18.cjs');
      fs.writeFileSync(preload, "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.20.4' } });\n");
      const run = await runNavi(['sessions', 'list'], { cwd: f.cwd, env: { ...f.env, NODE_OPTIONS: `--require ${preload}` } });
      expect(run.code, describeRun(run)).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe('navi: Node.js 18.20.4 is too old for navi: it needs 20.19 or later, 22.12 or later, or 24 (the LTS to install)\n');
      expect(fs.existsSync(f.dataDir)).toBe(false);
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'completion bash prints a script bash loads',
    async () => {
      const f = noDatabase();
      const run = await runNavi(['completion', 'bash'], { cwd: f.cwd, env: f.env });
      expect(run.code, describeRun(run)).toBe(0);
      const loaded = execFileSync('bash', ['--norc', '-c', `${run.stdout}\ncomplete -p navi`], { encoding: 'utf8' });
      expect(loaded).toContain('_navi_completion navi');
    },
    SCENARIO_TIMEOUT_MS,
  );

  it(
    'mcp list starts the configured stdio server and counts its tools',
    async () => {
      const f = noDatabase();
      writeFiles(f.cwd, { '.mcp.json': JSON.stringify({ mcpServers: { t: { command: process.execPath, args: [TEST_SERVER] } } }) });
      const list = jsonOf(await runNavi(['mcp', 'list', '-o', 'json'], { cwd: f.cwd, env: f.env }));
      expect(list.servers).toEqual([expect.objectContaining({ name: 't', transport: 'stdio', state: 'ready', enabled: true })]);
      expect((list.servers as Array<{ tool_count: number }>)[0]?.tool_count).toBeGreaterThan(0);
      expect(fs.existsSync(f.dataDir)).toBe(false);
    },
    SCENARIO_TIMEOUT_MS,
  );
});

forEachBackend((backend) => {
  describe('smoke', () => {
    it(
      'run -o json with one tool call; sessions list and show, memory list read it back',
      async () => {
        const s = await scenario(backend, {
          turns: [{ tool_calls: [{ name: 'remember', arguments: { fact: FACT } }] }, { content: 'Noted: tabs.' }],
          on_exhausted: 'error',
        });
        const result = jsonOf(await s.navi(['run', '-o', 'json', 'remember that I prefer tabs']));
        expectResult(result, { status: 'success', exit_code: 0, result: 'Noted: tabs.', num_turns: 2 });
        const sessionId = String(result.session_id);
        // navi ran on the Node that runs these tests (so the compat tier under Node 24 is navi on Node 24).
        expect(s.chats()[0]?.userAgent).toContain(`Node.js ${process.version}`);

        const sessions = jsonOf(await s.navi(['sessions', 'list', '-o', 'json'])).sessions as Array<Record<string, unknown>>;
        expect(sessions).toEqual([expect.objectContaining({ id: sessionId, kind: 'chat', title: 'remember that I prefer tabs' })]);

        const shown = jsonOf(await s.navi(['sessions', 'show', sessionId, '-o', 'json']));
        const roles = (shown.messages as Array<{ role: string }>).map((m) => m.role);
        expect(roles[0]).toBe('user');
        expect(roles).toContain('tool');
        expect(roles.at(-1)).toBe('assistant');

        const memory = jsonOf(await s.navi(['memory', 'list', '-o', 'json']));
        expect(memory.memories).toEqual([expect.objectContaining({ fact: FACT, session_id: sessionId })]);
      },
      LONG_SCENARIO_TIMEOUT_MS,
    );

    it(
      'loop finishes through its gate; runs list and runs show read the run',
      async () => {
        const s = await scenario(backend, { turns: [] });
        const repo = loopRepo();
        const result = jsonOf(await s.navi(['loop', 'task.yaml', '-o', 'json'], { cwd: repo }));
        expectResult(result, { status: 'success', reason: 'gate_passed', exit_code: 0 });
        const runId = String(result.run_id);

        const runs = jsonOf(await s.navi(['runs', 'list', '-o', 'json'], { cwd: repo })).runs as Array<Record<string, unknown>>;
        expect(runs).toEqual([expect.objectContaining({ id: runId, status: 'completed' })]);

        const shown = jsonOf(await s.navi(['runs', 'show', runId, '-o', 'json'], { cwd: repo }));
        expect(shown.run).toMatchObject({ id: runId, status: 'completed' });
        expect((shown.iterations as unknown[]).length).toBe(result.iterations);
      },
      LONG_SCENARIO_TIMEOUT_MS,
    );

    it(
      'serve: the listening line, an authenticated GET, SIGTERM stops it',
      async () => {
        const s = await scenario(backend, { turns: [] });
        const srv = await serve(s);
        expect(await srv.api('GET', '/sessions')).toEqual({ status: 200, body: { sessions: [] } });
        expect((await srv.api('GET', '/sessions', undefined, { authorization: '' })).status).toBe(401);
        srv.proc.kill('SIGTERM');
        const end = await srv.proc.result;
        // SPEC §4: SIGTERM is an interruption, exit 130 (as the serve tests expect), with no stack trace.
        expect(end.code, describeRun(end)).toBe(130);
        expect(stackLines(end.stderr)).toEqual([]);
      },
      SCENARIO_TIMEOUT_MS,
    );

    it(
      'doctor -o json passes every check; db migrate on a migrated database',
      async () => {
        const s = await scenario(backend, { turns: [] });
        const doctor = jsonOf(await s.navi(['doctor', '-o', 'json']));
        expect(doctor.ok).toBe(true);
        expect((doctor.checks as Array<{ name: string; ok: boolean }>).filter((c) => !c.ok)).toEqual([]);

        const migrated = jsonOf(await s.navi(['db', 'migrate', '-o', 'json'], { host: false }));
        expect(migrated).toMatchObject({ migrated: true, backend: backend.kind === 'pglite' ? 'pglite' : 'postgres' });
      },
      SCENARIO_TIMEOUT_MS,
    );
  });
}, { both: 'the point is that each store works on this Node version' });

describe('smoke: the job queue (PostgreSQL)', () => {
  it(
    'queue add, queue list, and a worker runs the job',
    async (ctx) => {
      if (ADMIN_URL === undefined) ctx.skip('queue and worker need PostgreSQL: set DATABASE_URL');
      const db = await freshDatabase();
      ctx.onTestFinished(() => db.drop());
      const fake = await fakeOllama({ turns: [] });
      const repo = loopRepo();
      const env = queueEnv(db.url, fake.url);
      jsonOf(await runNavi(['db', 'migrate', '-o', 'json'], { cwd: repo, env }));

      const id = await addJob(repo, env);
      expect(await listJobs(repo, env)).toEqual([expect.objectContaining({ id, status: 'queued' })]);

      const worker = await startWorker(repo, env);
      ctx.onTestFinished(async () => {
        worker.kill('SIGKILL');
        await worker.result;
      });
      const done = await worker.waitForEvent('worker', (e) => e.event === 'job_completed' || e.event === 'job_failed');
      expect(done).toMatchObject({ event: 'job_completed', job_id: id, exit_code: 0 });
      worker.kill('SIGTERM');
      const end = await worker.result;
      expect(end.code, describeRun(end)).toBe(0);
      expect(workerEvents(worker, 'job_started').map((e) => e.job_id)).toEqual([id]);
    },
    LONG_SCENARIO_TIMEOUT_MS,
  );
});
