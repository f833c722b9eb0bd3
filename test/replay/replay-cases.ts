/**
 * The end-to-end runs of the shipped profiles and tasks that navi's suite replays from
 * recordings (test/fixtures/recordings/*.jsonl): each case is a project (files, a git
 * repository), a command, the scripted model it was recorded against (the fake Ollama), and
 * what the replay must show. `scripts/record-fixtures.ts` records them; `shipped.test.ts`
 * replays them with no server at all. A change to a prompt, profile or tool shows up there as
 * a replay mismatch naming the request and the change: record again when it is intended.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { FakeScript, FakeTurn } from '../support/fake-ollama.js';
import { REPO_ROOT } from '../support/cli.js';

export const RECORDINGS_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'recordings');

export interface ReplayCase {
  /** Also the recording's file name (`<name>.jsonl`). */
  name: string;
  /** navi's arguments (without --record/--replay). */
  args: string[];
  /** Project files; `@shipped:tasks/x.yaml` copies a file shipped with navi. */
  files: Record<string, string>;
  script: FakeScript;
  expect: {
    exit: number;
    /** Names of the tool calls, in order (sub-agents' included). */
    tools: string[];
    /** The result's text. */
    result: RegExp;
    /** Loop runs: the status of the run. */
    loopStatus?: string;
  };
}

const call = (thinking: string, name: string, args: Record<string, unknown>): FakeTurn => ({ thinking, tool_calls: [{ name, arguments: args }] });

const GREET_BROKEN = "export function greet(name) {\n  return `Helo, ${name}!`;\n}\n";
const GREET_TEST = "import { greet } from './greet.js';\n\nconst got = greet('Ada');\nif (got !== 'Hello, Ada!') {\n  console.log(`FAIL greet('Ada') = ${got}`);\n  process.exit(1);\n}\nconsole.log('ok greet');\n";

export const CASES: ReplayCase[] = [
  {
    name: 'default-profile',
    args: ['run', '-p', 'default', 'Summarise notes.md in one sentence.'],
    files: { 'notes.md': '# Notes\n\n- The release is on Friday.\n- Alice owns the changelog.\n' },
    script: {
      turns: [
        call('I need to read notes.md first.', 'read_file', { path: 'notes.md' }),
        { thinking: 'Two points: release Friday, Alice owns the changelog.', content: 'The release is on Friday and Alice owns the changelog.' },
      ],
    },
    expect: { exit: 0, tools: ['read_file'], result: /^The release is on Friday and Alice owns the changelog\.$/ },
  },
  {
    name: 'coder-profile',
    args: ['run', '-p', 'coder', 'greet.test.js fails: fix greet.js.'],
    files: { 'greet.js': GREET_BROKEN, 'greet.test.js': GREET_TEST, 'package.json': '{ "type": "module", "private": true }\n' },
    script: {
      turns: [
        call('Run the test to see the failure.', 'shell', { command: 'node greet.test.js' }),
        call('A typo in the greeting. Read greet.js.', 'read_file', { path: 'greet.js' }),
        call('Fix "Helo".', 'edit_file', { path: 'greet.js', old_string: 'Helo', new_string: 'Hello' }),
        call('Run the test again.', 'shell', { command: 'node greet.test.js' }),
        { content: 'Fixed the typo in greet.js ("Helo" → "Hello"); greet.test.js passes.' },
      ],
    },
    expect: { exit: 0, tools: ['shell', 'read_file', 'edit_file', 'shell'], result: /^Fixed the typo in greet\.js/ },
  },
  {
    name: 'researcher-profile',
    args: ['run', '-p', 'researcher', 'Which files still have TODO comments, and what do they say?'],
    files: { 'src/a.js': '// TODO: handle empty input\nexport const a = 1;\n', 'src/b.js': 'export const b = 2;\n', 'src/c.js': '// TODO: remove after v2\nexport const c = 3;\n' },
    script: {
      turns: [
        call('Search for TODO first.', 'search_files', { pattern: 'TODO' }),
        call('Two files. A helper can read them and summarise; it stays read-only.', 'spawn_agent', { task: 'Read src/a.js and src/c.js and quote their TODO comments.', profile_id: 'default' }),
        call('Read both.', 'read_file', { path: 'src/a.js' }),
        call('And the other.', 'read_file', { path: 'src/c.js' }),
        { content: 'src/a.js: "TODO: handle empty input"; src/c.js: "TODO: remove after v2".' },
        { content: 'Two files have TODOs: src/a.js (handle empty input) and src/c.js (remove after v2).' },
      ],
    },
    expect: { exit: 0, tools: ['search_files', 'read_file', 'read_file', 'spawn_agent'], result: /^Two files have TODOs/ },
  },
  {
    name: 'write-doc-task',
    args: ['loop', 'tasks/write-doc.yaml'],
    files: {
      'tasks/write-doc.yaml': '@shipped:tasks/write-doc.yaml',
      'package.json': '{ "name": "tiny", "private": true, "type": "module", "scripts": { "test": "node test.js" } }\n',
      'src/sum.js': 'export const sum = (xs) => xs.reduce((a, b) => a + b, 0);\n',
      'test.js': "import { sum } from './src/sum.js';\nif (sum([1, 2]) !== 3) process.exit(1);\n",
    },
    script: {
      turns: [
        call('Look at the layout first.', 'list_dir', { path: '.' }),
        call('One source file.', 'read_file', { path: 'src/sum.js' }),
        call('Now write the overview.', 'write_file', {
          path: 'docs/ARCHITECTURE.md',
          content: '# Architecture\n\nA tiny module with one function and a test.\n\n## src/\n\n`sum.js` exports `sum(xs)`; it depends on nothing.\n\n## How to build and test\n\n`npm test`\n',
        }),
        call('The doc exists with sections; signal.', 'loop_signal', { type: 'exit', success: true, reason: 'docs/ARCHITECTURE.md written from the code' }),
        { content: 'Wrote docs/ARCHITECTURE.md.' },
      ],
    },
    expect: { exit: 0, tools: ['list_dir', 'read_file', 'write_file', 'loop_signal'], result: /Wrote docs\/ARCHITECTURE\.md/, loopStatus: 'completed' },
  },
  {
    name: 'fix-failing-tests-task',
    args: ['loop', 'tasks/fix-failing-tests.yaml'],
    files: {
      'tasks/fix-failing-tests.yaml': '@shipped:tasks/fix-failing-tests.yaml',
      'package.json': '{ "name": "greet", "private": true, "type": "module", "scripts": { "test": "node greet.test.js" } }\n',
      'greet.js': GREET_BROKEN,
      'greet.test.js': GREET_TEST,
    },
    script: {
      turns: [
        call('Run the tests first.', 'shell', { command: 'node greet.test.js' }),
        call('Read the code under test.', 'read_file', { path: 'greet.js' }),
        call('Fix the typo.', 'edit_file', { path: 'greet.js', old_string: 'Helo', new_string: 'Hello' }),
        call('Test and commit.', 'shell', { command: "node greet.test.js && git commit -qam 'Fix greeting typo'" }),
        call('Tests pass and the fix is committed.', 'loop_signal', { type: 'exit', success: true, reason: 'greet.js typo fixed; tests pass; committed' }),
        { content: 'Changed greet.js: the greeting said "Helo". Tests pass.' },
      ],
    },
    expect: { exit: 0, tools: ['shell', 'read_file', 'edit_file', 'shell', 'loop_signal'], result: /Changed greet\.js/, loopStatus: 'completed' },
  },
];

/** Fixed identity and dates: the project's git state is the same for every run. */
export const GIT_ENV: Record<string, string> = {
  GIT_AUTHOR_NAME: 'navi test',
  GIT_AUTHOR_EMAIL: 'test@navi.invalid',
  GIT_COMMITTER_NAME: 'navi test',
  GIT_COMMITTER_EMAIL: 'test@navi.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

/** Writes the case's project into `dir` and commits it. */
export function prepareProject(c: ReplayCase, dir: string): void {
  for (const [rel, content] of Object.entries(c.files)) {
    const abs = path.join(dir, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    const shipped = /^@shipped:(.+)$/.exec(content);
    fs.writeFileSync(abs, shipped ? fs.readFileSync(path.join(REPO_ROOT, shipped[1] ?? '')) : content);
  }
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd: dir, env: { ...process.env, ...GIT_ENV }, stdio: 'ignore' });
  };
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'project');
}

export function recordingOf(c: ReplayCase): string {
  return path.join(RECORDINGS_DIR, `${c.name}.jsonl`);
}
