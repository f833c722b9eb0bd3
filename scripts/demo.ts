/**
 * `npm run demo`: navi's loop mode end to end on a machine without Ollama. It replays
 * `demo/session.jsonl` — a recorded run of a thinking model with tools, a researcher sub-agent
 * and a two-iteration loop whose exit gate blocks a premature "done" — in a fresh copy of the
 * demo project (`demo/project/`), with a throwaway data directory and no network at all.
 * Extra arguments go to `navi loop` (e.g. `-- -o stream-json`, `-- --replay-timing` to see it
 * at the recorded pace). `scripts/record-demo.ts` records the session again.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoEnv, prepareDemoProject, RECORDING, ROOT } from './demo-project.js';

const dir = mkdtempSync(join(tmpdir(), 'navi-demo-'));
const project = join(dir, 'project');
prepareDemoProject(project);
const extra = process.argv.slice(2);
const child = spawn(process.execPath, [join(ROOT, 'dist/cli/main.cjs'), 'loop', 'task.yaml', '--replay', RECORDING, ...extra], {
  cwd: project,
  stdio: 'inherit',
  env: demoEnv({ NAVI_DATA_DIR: join(dir, 'pgdata'), DATABASE_URL: '' }),
});
const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
rmSync(dir, { recursive: true, force: true });
process.exit(code);
