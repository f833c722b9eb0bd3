/**
 * Regenerates test/fixtures/recordings/*.jsonl: each case of `test/replay/replay-cases.ts`
 * (the shipped profiles and tasks) runs once against the fake Ollama with `--record`, and must
 * end as the case expects. Run after an intended change to what navi sends the model:
 *   npm run build && tsx scripts/record-fixtures.ts [name…]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeOllama } from '../test/support/fake-ollama.js';
import { CASES, GIT_ENV, prepareProject, recordingOf } from '../test/replay/replay-cases.js';
import { CLI_PATH } from '../test/support/cli.js';

const only = process.argv.slice(2);
let failed = 0;
for (const c of CASES.filter((x) => only.length === 0 || only.includes(x.name))) {
  const fake = await startFakeOllama({ ...c.script, on_exhausted: 'error' });
  const dir = mkdtempSync(join(tmpdir(), 'navi-fixture-'));
  try {
    const project = join(dir, 'project');
    prepareProject(c, project);
    // Asynchronously: the fake server answers from this process meanwhile.
    const child = spawn(process.execPath, [CLI_PATH, ...c.args, '--ollama-host', fake.url, '--record', recordingOf(c), '-o', 'stream-json'], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, CI: '1', NAVI_DATA_DIR: join(dir, 'pgdata'), ...GIT_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== c.expect.exit) {
      failed++;
      process.stderr.write(`record-fixtures: ${c.name}: navi exited ${String(code)}, expected ${c.expect.exit}\n${stderr}\n`);
    } else {
      process.stdout.write(`record-fixtures: ${c.name}: ${fake.requests.filter((r) => r.path === '/api/chat').length} model calls → ${recordingOf(c)}\n`);
    }
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
process.exitCode = failed > 0 ? 1 : 0;
