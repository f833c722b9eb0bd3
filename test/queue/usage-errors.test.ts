/**
 * Usage errors of `navi queue` / `navi worker`: on the embedded PGlite database the queue does not
 * exist (exit 2 naming DATABASE_URL), and bad flags are exit 2 before any connection. No stack traces.
 * The flags yargs refuses itself (`--priority -1`, `--concurrency 0`, `--repo` without its value)
 * are checked in process: test/unit/cli-parsing.unit.test.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, makeTempDir, runNavi, stackLines } from '../support/cli.js';

describe('navi queue and navi worker on PGlite', () => {
  const cwd = makeTempDir('queue-pglite');
  const env = cleanEnv({ NAVI_DATA_DIR: `${makeTempDir('queue-pglite-data')}/pgdata` });
  it.each([
    [['queue', 'add', 'tasks/fix.yaml', '--repo', '.']],
    [['queue', 'list']],
    [['queue', 'list', '-o', 'json']],
    [['queue', 'cancel', '0b6c']],
    [['worker']],
    [['worker', '--concurrency', '2']],
  ])('%j → exit 2', async (args) => {
    const r = await runNavi(args, { cwd, env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('DATABASE_URL');
    expect(stackLines(r.stderr)).toEqual([]);
  }, 90_000);
});

describe('navi queue add: flags checked before the queue is opened (exit 2)', () => {
  const cwd = makeTempDir('queue-flags');
  // A server that is not there: every case must fail on its flags before connecting.
  const env = cleanEnv({ DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' });
  it.each([
    [['queue', 'add', 'task.yaml', '--repo', '/nonexistent/repo'], 'not a git repository'],
    [['queue', 'add', 'task.yaml', '--repo', 'https://example.invalid/a.git', '--approval', 'strict'], '--decisions FILE'],
    [['queue', 'add', 'task.yaml', '--repo', 'https://example.invalid/a.git', '--decisions', 'missing.jsonl'], 'no such file'],
    [['queue', 'add', 'task.yaml', '--repo', 'https://example.invalid/a.git', '--cron', 'nightly'], '--cron'],
    [['queue', 'add', 'task.yaml', '--repo', 'https://example.invalid/a.git', '--deadline', 'soon'], '--deadline'],
    // Issue 35: `--repo=-u…` reached git clone as --upload-pack.
    [['queue', 'add', 'task.yaml', '--repo=-u/tmp/evil'], `--repo '-u/tmp/evil' begins with "-"`],
    [['queue', 'add', 'task.yaml', '--repo', 'https://example.invalid/a.git', '--branch=-x'], `--branch '-x' begins with "-"`],
  ])('%j', async (args, said) => {
    const r = await runNavi(args, { cwd, env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(said);
    expect(stackLines(r.stderr)).toEqual([]);
  }, 90_000);
});

describe("navi queue add: a local task file is checked before it is queued (exit 2)", () => {
  it("a notify URL holding ${DATABASE_URL} names the file and the field", async () => {
    const repo = makeTempDir('queue-notify-task');
    fs.writeFileSync(path.join(repo, 'task.yaml'), 'prompt: p\nnotify:\n  - { url: "http://collect.example/x?db=${DATABASE_URL}" }\n');
    execFileSync('git', ['init', '-q'], { cwd: repo });
    const env = cleanEnv({ DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' });
    const r = await runNavi(['queue', 'add', 'task.yaml'], { cwd: repo, env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('task.yaml:3:7: notify[0].url: must not hold "${"');
    expect(r.stderr).not.toContain('collect.example');
    expect(stackLines(r.stderr)).toEqual([]);
  }, 90_000);
});
