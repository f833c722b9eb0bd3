/**
 * `navi worker [--concurrency N] [--cache-dir DIR]` (issue 21): takes queued loop jobs until
 * SIGINT/SIGTERM, each in its own git worktree, with this machine's OLLAMA_HOST and config. The
 * first signal stops every loop at a safe point, saves it and hands its job back (exit 0 once
 * they are); a second one exits at once (130) and leaves the jobs to their leases.
 */
import { homedir } from 'node:os';
import path from 'node:path';
import { EXIT, StorageError, describeError } from '../../errors.js';
import type { WorkerEvent } from '../../queue/job-runner.js';
import { requirePostgres } from '../../queue/require-postgres.js';
import type { GlobalArgs } from '../global-args.js';
import { integerFlag } from '../flag-values.js';
import { printJson, resolveCwd, setup } from '../setup.js';
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

export async function workerCommand(argv: Args): Promise<number> {
  const { config, env } = setup(argv);
  const url = requirePostgres(config.db.url, 'worker');
  const concurrency = integerFlag('--concurrency', argv.concurrency ?? 1);
  const cacheDir = typeof argv.cacheDir === 'string' ? path.resolve(resolveCwd(argv.cwd), argv.cacheDir) : defaultCacheDir(env);
  const json = argv.output !== 'text';
  const log = (e: WorkerEvent): void => {
    if (json) printJson({ type: 'worker', ...e });
    else if (!argv.quiet || e.event === 'worker_error') process.stdout.write(`${textOf(e)}\n`);
  };
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals += 1;
    if (signals > 1) process.exit(EXIT.interrupted);
    if (!argv.quiet) process.stderr.write(`navi: ${sig}: stopping the loops at a safe point and handing their jobs back…\n`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const { queueTiming } = await import('../../queue/engine.js');
  const { runWorker } = await import('../../queue/worker.js');
  // The jobs' loops use this machine's config and Ollama; the shared database by URL.
  const childEnv: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url };
  delete childEnv[LOOP_ENV];
  if (argv.ollamaHost !== undefined) childEnv.OLLAMA_HOST = argv.ollamaHost;
  try {
    await runWorker({
      url,
      concurrency,
      timing: queueTiming(env),
      naviBin: process.argv[1] ?? 'navi',
      cacheDir,
      env: childEnv,
      log,
      signal: controller.signal,
      onReady: (name) => {
        if (json) printJson({ type: 'worker', event: 'worker_ready', worker: name, concurrency });
        else if (!argv.quiet) process.stderr.write(`navi: worker ${name} takes up to ${concurrency} job(s) at once; SIGINT/SIGTERM stops it\n`);
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
