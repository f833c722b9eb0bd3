/**
 * The files of a project that change what navi runs (issue 35): its config (`.nav-config.json`,
 * navigator's `.agent/.nav-config.json`), its MCP servers (`.mcp.json`), its profiles
 * (`profiles/`) and its tool modules (`tools/`). A worker that runs a job from a repository it
 * does not trust sets `NAVI_PROJECT_CONFIG=ignore` for the job's `navi loop`: navi then takes
 * from the working directory only task files, `AGENTS.md` and the code, never these.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidInputError } from '../errors.js';

/** The variable, and its one value besides unset (`use` says the default out loud). */
export const PROJECT_CONFIG_ENV = 'NAVI_PROJECT_CONFIG';

/** The files and folders ignored, as named in the message. */
export const PROJECT_FILES: readonly string[] = ['.nav-config.json', '.agent/.nav-config.json', '.mcp.json', 'profiles/', 'tools/'];

/** True when the working directory's project files are not to be read; a bad value is exit 2. */
export function projectFilesIgnored(env: Readonly<Record<string, string | undefined>>): boolean {
  const value = env[PROJECT_CONFIG_ENV]?.trim() ?? '';
  if (value === '' || value === 'use') return false;
  if (value === 'ignore') return true;
  throw new InvalidInputError('config_invalid', `environment variable ${PROJECT_CONFIG_ENV} must be "ignore" or "use" (got '${value.slice(0, 40)}')`);
}

/** Which of the project files `cwd` holds (what the warning names). */
export function presentProjectFiles(cwd: string): string[] {
  return PROJECT_FILES.filter((f) => existsSync(join(cwd, f)));
}

/** The one warning of a run that ignored some: what, why, and how the operator allows them. */
export function ignoredWarning(files: readonly string[]): string {
  return (
    `ignoring this repository's ${files.join(', ')} (${PROJECT_CONFIG_ENV}=ignore: the worker does not trust its config; ` +
    'navi worker --trust-repo-config or worker.trusted_repos in the worker\'s config allows it)'
  );
}
