/**
 * The targets a loop notifies: the config's `notify`, then the task file's, then each
 * `--notify URL` (every event, shape by host). The same URL twice is one target (the first
 * keeps its settings). Checked before the loop starts, so an overnight run does not learn in the
 * morning that its webhook variable was never set: a bad `--notify` URL or a `${VAR}` that is not
 * set is exit 2, naming the target by its redacted form and the variable by its name.
 */
import { notifyUrlProblem, type NotifyTargetConfig } from '../config/notify-schema.js';
import { InvalidInputError } from '../errors.js';
import { expandUrl, redactUrl, urlVariables } from './url.js';

/** Where targets come from. */
export interface TargetSources {
  config: readonly NotifyTargetConfig[];
  task?: readonly NotifyTargetConfig[] | undefined;
  /** `--notify` values as yargs hands them over (one string, or a list when repeated). */
  flags?: string | readonly string[] | undefined;
}

/** Every target, deduplicated by URL as written. */
export function collectTargets(src: TargetSources): NotifyTargetConfig[] {
  const flags = src.flags === undefined ? [] : typeof src.flags === 'string' ? [src.flags] : [...src.flags];
  const fromFlags = flags.map((url): NotifyTargetConfig => {
    const problem = url.trim() === '' ? 'give a URL' : notifyUrlProblem(url);
    if (problem !== undefined) throw new InvalidInputError('flag_invalid', `--notify ${redactUrl(url)}: ${problem}`);
    return { url };
  });
  const out: NotifyTargetConfig[] = [];
  for (const t of [...src.config, ...(src.task ?? []), ...fromFlags]) if (!out.some((o) => o.url === t.url)) out.push(t);
  return out;
}

/**
 * Throws (exit 2) when a target refers to a variable `env` does not set, or its expanded URL is
 * not an http(s) URL (one written as `${HOOK}` alone is first checked here). Nothing of the
 * value is shown.
 */
export function requireVariables(targets: readonly NotifyTargetConfig[], env: Readonly<Record<string, string | undefined>>): void {
  for (const t of targets) {
    if (urlVariables(t.url).length === 0) continue;
    const expanded = expandUrl(t.url, env);
    if (!expanded.ok) {
      const names = expanded.missing.map((n) => `\${${n}}`).join(', ');
      const verb = expanded.missing.length === 1 ? 'is' : 'are';
      throw new InvalidInputError('notify_variable_unset', `notify target ${redactUrl(t.url)}: ${names} ${verb} not set (read from the environment when a notification is sent)`);
    }
    const problem = notifyUrlProblem(expanded.url);
    if (problem !== undefined) throw new InvalidInputError('notify_url_invalid', `notify target ${redactUrl(t.url)}: once expanded, it ${problem}`);
  }
}
