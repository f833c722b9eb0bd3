/**
 * What a worker takes from a job's repository (issue 35): its task files, `AGENTS.md` and code
 * always; its own config (`.nav-config.json`, `.mcp.json`, `profiles/`, `tools/`) only when the
 * operator trusts it — `navi worker --trust-repo-config` (every repository), or the repository
 * listed in the worker's config `worker.trusted_repos`. Pure, table-tested.
 */

/** A repository as compared: no trailing slashes, no `.git` suffix (`…/app.git/` is `…/app`). */
export function repoKey(repo: string): string {
  return repo.trim().replace(/\/+$/, '').replace(/\.git$/, '').replace(/\/+$/, '');
}

/** Whether the job's repository (as `navi queue add` stored it) is one the operator trusts. */
export function isTrustedRepo(repo: string, trust: { all: boolean; repos: readonly string[] }): boolean {
  if (trust.all) return true;
  const key = repoKey(repo);
  return key !== '' && trust.repos.some((r) => repoKey(r) === key);
}
