/**
 * `npm run demo`: navi's main job end to end on a machine without Ollama. It starts the
 * scripted Ollama-compatible test server on 127.0.0.1 with a short session (thinking, a
 * list_dir call, a shell call, an answer) and runs the built CLI against it in this checkout,
 * with a throwaway data directory. Extra arguments go to `navi run` (e.g. `-- -o stream-json`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeOllama } from '../test/support/fake-ollama.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const fake = await startFakeOllama({
  turns: [
    {
      thinking: 'The user wants to know what this project is. I will look at the top level and count the source files.',
      tool_calls: [
        { name: 'list_dir', arguments: { path: '.' } },
        { name: 'shell', arguments: { command: "find src -name '*.ts' | wc -l" } },
      ],
    },
    {
      content:
        'This is navi, a headless agent runner: `src/` holds the TypeScript sources (counted above), ' +
        '`profiles/` the agent profiles and `tasks/` example loop tasks. (Scripted demo model: point ' +
        '`--ollama-host` at a real Ollama to use a real one.)',
    },
  ],
});
const data = mkdtempSync(join(tmpdir(), 'navi-demo-'));
const extra = process.argv.slice(2);
const child = spawn(
  process.execPath,
  [join(root, 'dist/cli/main.cjs'), 'run', '--ollama-host', fake.url, ...extra, 'What is in this project?'],
  { cwd: root, stdio: 'inherit', env: { ...process.env, NAVI_DATA_DIR: join(data, 'pgdata'), DATABASE_URL: '' } },
);
const code = await new Promise<number>((resolve) => child.on('exit', (c) => resolve(c ?? 1)));
await fake.close();
rmSync(data, { recursive: true, force: true });
process.exit(code);
