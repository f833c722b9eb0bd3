/**
 * `navi worker [--concurrency N] [--cache-dir DIR] [--sandbox MODE] [--trust-repo-config]` (issues
 * 21, 35): takes queued loop jobs until SIGINT/SIGTERM, each in its own git worktree, with this
 * machine's OLLAMA_HOST and config. It trusts its operator, not the repository: every job's loop
 * runs in at least the worker's sandbox (default workspace-write), and a repository's own config
 * is ignored unless the operator trusts it. The
 * first signal stops every loop at a safe point, saves it and hands its job back (exit 0 once
 * they are); a second one exits at once (130) and leaves the jobs to their leases.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { PROJECT_CONFIG_ENV } from '../../config/project-files.js';
import type { NaviConfig } from '../../config/schema.js';
import { EXIT, InvalidInputError, StorageError, describeError } from '../../errors.js';
import type { JobData } from '../../queue/job-data.js';
import type { WorkerEvent } from '../../queue/job-runner.js';
import { requirePostgres } from '../../queue/require-postgres.js';
import { isTrustedRepo } from '../../queue/trust.js';
import { formatFloor, SANDBOX_FLOOR_ENV } from '../../sandbox/floor.js';
import { describePolicy, type SandboxPolicy } from '../../sandbox/modes.js';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';
import { integerFlag } from '../flag-values.js';
import { printJson, resolveCwd, setup } from '../setup.js';
import { findTaskFile } from '../task-lookup.js';
import { terminalSafe } from '../terminal-text.js';
import { loadTaskFile, type Task } from '../../loop/task-file.js';
import { LOOP_ENV } from '../../loop/nesting.js';

type Args = GlobalArgs & Record<string, unknown>;

/** `$XDG_CACHE_HOME/navi/worker`, else `~/.cache/navi/worker`: clones, worktrees and job logs. */
export function defaultCacheDir(env: Record<string, string | undefined>): string {
  return path.join(env.XDG_CACHE_HOME || path.join(homedir(), '.cache'), 'navi', 'worker');
}

function textOf(e: WorkerEvent): string {
  const parts = [e.event.replace(/^job_/, 'job ').replace('_', ' ')];
  if (e.job_id !== undefined) parts.push(e.job_id);
  if (e.task !== undefined) parts.push(JSON.stringify(e.task));
  if (e.run_id !== undefined) parts.push(`run ${e.run_id}`);
  if (e.exit_code !== undefined) parts.push(`exit ${String(e.exit_code)}`);
  if (e.message !== undefined) parts.push(`: ${e.message}`);
  return parts.join(' ');
}

/**
 * The worker's sandbox floor (issue 35): `--sandbox` or the worker's config `sandbox`, else
 * workspace-write; checked here, so a worker that cannot sandbox refuses to start (exit 2) rather
 * than run every job without one. Only `off` said out loud runs jobs unsandboxed.
 */
async function workerFloor(config: NaviConfig, explicit: ReadonlySet<string>, env: Record<string, string | undefined>): Promise<SandboxPolicy> {
  const floor: SandboxPolicy = { mode: explicit.has('sandbox.mode') ? config.sandbox.mode : 'workspace-write', network: config.sandbox.network };
  if (floor.mode === 'off') return floor;
  const { checkLauncher } = await import('../../sandbox/prepare.js');
  const found = await checkLauncher(env);
  if ('problem' in found) {
    const said = explicit.has('sandbox.mode') ? `--sandbox ${floor.mode}` : `jobs run in a sandbox (--sandbox ${floor.mode} by default)`;
    throw new InvalidInputError(
      'sandbox_unavailable',
      `navi worker: ${said}, and none can be set up here: ${found.problem}; or run the jobs without one: navi worker --sandbox off (a job's repository then runs its commands as you)`,
    );
  }
  return floor;
}

/**
 * A new job's task file, read in its worktree before the loop starts: its `cwd` must stay in the
 * worktree. A task from a repository could otherwise say `cwd: /home/you` and have the loop (and
 * its workspace-write sandbox, which makes the working directory writable) work there. A task
 * file that does not load is left to the loop, which fails with exit 2 naming the problem.
 */
export function checkTaskCwd(data: JobData, worktree: string): void {
  const file = findTaskFile(data.task, worktree);
  if (file === null) return;
  let task: Task;
  try {
    task = loadTaskFile(file.path, file.display);
  } catch {
    return;
  }
  if (task.cwd === undefined) return;
  const real = (p: string): string => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const rel = path.relative(real(worktree), real(task.cwd));
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new InvalidInputError('task_cwd_outside', `${file.display}: cwd: ${terminalSafe(task.cwd)} is outside the job's repository; a worker runs a job only in its own worktree`);
  }
}

export async function workerCommand(argv: Args, host: CliHost): Promise<number> {
  const { config, explicit, host: { env } } = setup(argv, host);
  const url = requirePostgres(config.db.url, 'worker');
  const floor = await workerFloor(config, explicit, env);
  const trust = { all: argv.trustRepoConfig === true, repos: config.worker.trusted_repos };
  const concurrency = integerFlag('--concurrency', argv.concurrency ?? 1);
  const cacheDir = typeof argv.cacheDir === 'string' ? path.resolve(resolveCwd(argv.cwd, host.cwd), argv.cacheDir) : defaultCacheDir(env);
  const json = argv.output !== 'text';
  const log = (e: WorkerEvent): void => {
    if (json) printJson(host.stdout, { type: 'worker', ...e });
    else if (!argv.quiet || e.event === 'worker_error') host.stdout.write(`${textOf(e)}\n`);
  };
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) process.exit(EXIT.interrupted);
    if (!argv.quiet) host.stderr.write(`navi: ${sig}: stopping the loops at a safe point and handing their jobs back…\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const { queueTiming } = await import('../../queue/engine.js');
  const { runWorker } = await import('../../queue/worker.js');
  // The jobs' loops use this machine's config and Ollama; the shared database by URL.
  const childEnv: NodeJS.ProcessEnv = { ...env, DATABASE_URL: url };
  delete childEnv[LOOP_ENV];
  // The floor every job's loop runs at or above, a resume included (sandbox/floor.ts).
  if (floor.mode === 'off') delete childEnv[SANDBOX_FLOOR_ENV];
  else childEnv[SANDBOX_FLOOR_ENV] = formatFloor(floor);
  // A repository the operator does not trust runs with the operator's config only (config/project-files.ts).
  const jobEnv = (data: JobData): Record<string, string | undefined> => ({ [PROJECT_CONFIG_ENV]: isTrustedRepo(data.repo, trust) ? undefined : 'ignore' });
  if (argv.ollamaHost !== undefined) childEnv.OLLAMA_HOST = argv.ollamaHost;
  try {
    await runWorker({
      url,
      concurrency,
      timing: queueTiming(env),
      naviBin: process.argv[1] ?? 'navi',
      cacheDir,
      env: childEnv,
      jobEnv,
      checkJob: checkTaskCwd,
      log,
      signal: controller.signal,
      onReady: (name) => {
        const sandbox = describePolicy(floor);
        const trusted = trust.all ? 'every repository' : trust.repos.length === 0 ? 'no repository' : `${trust.repos.length} repositor${trust.repos.length === 1 ? 'y' : 'ies'}`;
        if (json) printJson(host.stdout, { type: 'worker', event: 'worker_ready', worker: name, concurrency, sandbox: floor.mode, sandbox_network: floor.network, trusted_repos: trust.all ? 'all' : trust.repos });
        else if (!argv.quiet) {
          host.stderr.write(`navi: worker ${name} takes up to ${concurrency} job(s) at once; SIGINT/SIGTERM stops it\n`);
          host.stderr.write(`navi: jobs run in the sandbox ${sandbox} at least; the config of ${trusted} is trusted\n`);
        }
      },
    });
  } catch (err) {
    throw new StorageError('queue_unavailable', `navi worker: cannot open the job queue in PostgreSQL: ${describeError(err)}`, { cause: err });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
}
