/**
 * `navi loop`'s notifications (issue 19): the targets of config, task file and `--notify`,
 * checked before anything is opened (exit 2), and the link to the run's page when config names
 * a `navi serve` (`notify_link_base`). The notifier's code is loaded only when there is a target.
 */
import type { NotifyTargetConfig } from '../config/notify-schema.js';
import type { NaviConfig } from '../config/schema.js';
import type { LoopRunOptions } from '../loop/runner-types.js';
import { collectTargets, requireVariables } from '../notify/targets.js';

/** The run's targets, checked: a bad `--notify` or an unset `${VAR}` is exit 2. */
export function notifyTargetsFor(
  config: NaviConfig,
  task: { notify?: NotifyTargetConfig[] } | undefined,
  flags: string | readonly string[] | undefined,
  env: NodeJS.ProcessEnv,
): NotifyTargetConfig[] {
  const targets = collectTargets({ config: config.notify, task: task?.notify, flags });
  requireVariables(targets, env);
  return targets;
}

/**
 * The loop options that notify `targets` (none without a target). `serverBase`: the address of the
 * `navi serve` that started the loop, used when config sets no `notify_link_base`.
 */
export async function loopNotifier(
  targets: readonly NotifyTargetConfig[],
  config: NaviConfig,
  env: NodeJS.ProcessEnv,
  serverBase?: string,
): Promise<Pick<LoopRunOptions, 'notifier' | 'pageUrl'>> {
  if (targets.length === 0) return {};
  const { Notifier } = await import('../notify/notifier.js');
  const base = (config.notify_link_base ?? serverBase)?.replace(/\/+$/, '');
  return {
    notifier: new Notifier({ targets, env }),
    ...(base !== undefined ? { pageUrl: (runId: string) => `${base}/#/runs/${encodeURIComponent(runId)}` } : {}),
  };
}
