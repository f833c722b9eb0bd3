/**
 * Regenerates `demo/session.jsonl`, the recording `npm run demo` replays: the demo project
 * (`demo/project/`) and its scripted model (`scripts/demo-project.ts`) run once against the
 * fake Ollama with `navi loop task.yaml --record`. Run it after a change that alters the
 * requests navi makes (prompts, profiles, tools): `npm run build && tsx scripts/record-demo.ts`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOllama } from '../test/support/fake-ollama.js';
import { demoEnv, demoScript, prepareDemoProject, RECORDING, ROOT } from './demo-project.js';

const fake = await startFakeOllama(demoScript());
const dir = mkdtempSync(join(tmpdir(), 'navi-demo-record-'));
try {
  const project = join(dir, 'project');
  prepareDemoProject(project);
  // Asynchronously: the fake server runs in this process and must answer meanwhile.
  const child = spawn(
    process.execPath,
    [join(ROOT, 'dist/cli/main.cjs'), 'loop', 'task.yaml', '--ollama-host', fake.url, '--record', RECORDING, '-o', 'stream-json'],
    { cwd: project, env: demoEnv({ NAVI_DATA_DIR: join(dir, 'pgdata'), DATABASE_URL: '', CI: '1' }), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const run = { status, stdout, stderr };
  const result = run.stdout.trim().split('\n').at(-1) ?? '';
  if (run.status !== 0) {
    process.stderr.write(`record-demo: navi exited ${String(run.status)}\n${run.stderr}\n${result}\n`);
    process.exitCode = 1;
  } else {
    process.stdout.write(`record-demo: wrote ${RECORDING} (${fake.requests.filter((r) => r.path === '/api/chat').length} model calls)\n`);
  }
} finally {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
}
