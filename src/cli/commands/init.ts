/**
 * `navi init`: starter files in the working directory. Never overwrites: an existing file is
 * reported and left alone.
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { packagePath } from '../../package-root.js';
import type { GlobalArgs } from '../global-args.js';
import type { CliHost } from '../host.js';
import { resolveCwd } from '../setup.js';

/** Files written by init: template path (under navi's templates/) → destination in the cwd. */
const FILES: ReadonlyArray<[string, string]> = [
  ['nav-config.json', '.nav-config.json'],
  ['profiles/my-agent/config.json', 'profiles/my-agent/config.json'],
  ['profiles/my-agent/system_prompt.txt', 'profiles/my-agent/system_prompt.txt'],
  ['tasks/example.yaml', 'tasks/example.yaml'],
];

export function initCommand(argv: GlobalArgs & Record<string, unknown>, host: CliHost): Promise<number> {
  const cwd = resolveCwd(argv.cwd, host.cwd);
  const templates = packagePath('templates');
  const created: string[] = [];
  const skipped: string[] = [];
  for (const [from, to] of FILES) {
    const dest = join(cwd, to);
    if (existsSync(dest)) {
      skipped.push(to);
      continue;
    }
    mkdirSync(dirname(dest), { recursive: true });
    copyFileSync(join(templates, from), dest);
    created.push(to);
  }
  if (argv.output !== 'text') {
    host.stdout.write(`${JSON.stringify({ created, skipped })}\n`);
  } else {
    for (const f of created) host.stdout.write(`created ${f}\n`);
    for (const f of skipped) host.stdout.write(`exists, left alone: ${f}\n`);
    if (created.length > 0) {
      host.stdout.write(`\nNext: navi doctor${relative(host.cwd, cwd) ? ` --cwd ${relative(host.cwd, cwd)}` : ''}, then navi run "…"\n`);
    }
  }
  return Promise.resolve(0);
}
