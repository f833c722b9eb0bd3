/**
 * Secret redaction end to end (SPEC §10, issue 5 item 3). Secret-looking environment variables
 * (names matching KEY|TOKEN|SECRET|PASSWORD) are present for navi; the shell prints them, a file
 * holding them is read and searched, a loop check prints them. Their values must not reach the
 * events (stream-json and text), any database row, `navi sessions show`, loop markers or loop
 * rows. A separate test pins what is *not* redacted: text the model writes itself (it may echo
 * a secret it inferred). SPEC §10 names tool output only; README, "Security", documents the limit.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeToolCall } from '../support/fake-ollama.js';
import { describeRun, eventsOf, expectValidStream, LONG_SCENARIO_TIMEOUT_MS, resultOf, scenario, SCENARIO_TIMEOUT_MS, writeFiles } from '../scenario/helpers.js';
import { dumpDatabase, readTree } from './helpers.js';

const SECRETS: Record<string, string> = {
  MY_API_TOKEN: 's3cr3t-value-xyz',
  DB_PASSWORD: 'pw-9f8e7d6c5b4a',
  APP_SECRET: 'app-secret-4242-zz',
  SERVICE_KEY: 'key-77aa88bb99cc',
  // Lower case counts too (the match is case-insensitive).
  github_token: 'ghp_lowercase_name_0001',
};
const VALUES = Object.values(SECRETS);

/** Which secret values (or their first 12 characters) occur in `text`, for a readable failure. */
function leaked(text: string): string[] {
  return VALUES.filter((v) => text.includes(v) || text.includes(v.slice(0, 12)));
}

const CREDS = `api: ${SECRETS.MY_API_TOKEN}\npassword=${SECRETS.DB_PASSWORD}\n${SECRETS.APP_SECRET} ${SECRETS.SERVICE_KEY} ${SECRETS.github_token}\n`;

/** Every way a tool shows the secrets. */
const TOOL_CALLS: FakeToolCall[] = [
  { name: 'shell', arguments: { command: 'echo "$MY_API_TOKEN $DB_PASSWORD $APP_SECRET $SERVICE_KEY $github_token"' } },
  { name: 'shell', arguments: { command: 'printenv' } },
  { name: 'shell', arguments: { command: 'echo "$MY_API_TOKEN" >&2; exit 3' } },
  { name: 'read_file', arguments: { path: 'creds.txt' } },
  { name: 'search_files', arguments: { pattern: 'api|password' } },
  { name: 'edit_file', arguments: { path: 'creds.txt', old_string: 'no such text', new_string: 'x' } },
];

forEachBackend((backend) => {
  describe('secret redaction', () => {
    it('tool output is redacted in events (stream-json and text), every database row and `navi sessions show`', async () => {
      const s = await scenario(backend, { turns: [{ tool_calls: TOOL_CALLS }, { content: 'done' }], on_exhausted: 'error' });
      writeFiles(s.cwd, { 'creds.txt': CREDS });
      const env = SECRETS;

      const run = await s.navi(['run', '-o', 'stream-json', 'show me the environment'], { env });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const outputs = eventsOf(events, 'tool_call').map((c) => String(c.output));
      expect(outputs).toHaveLength(TOOL_CALLS.length);
      expect(outputs[0]).toContain('[REDACTED:MY_API_TOKEN] [REDACTED:DB_PASSWORD] [REDACTED:APP_SECRET] [REDACTED:SERVICE_KEY] [REDACTED:github_token]');
      expect(outputs[3]).toContain('[REDACTED:MY_API_TOKEN]');
      expect(leaked(run.stdout), 'secrets in stream-json').toEqual([]);
      expect(leaked(run.stderr), 'secrets on stderr').toEqual([]);

      // Text mode: the same tools, rendered for a person.
      s.fake.setScript({ turns: [{ tool_calls: TOOL_CALLS }, { content: 'done' }], on_exhausted: 'error' });
      const text = await s.navi(['run', 'again, in text mode'], { env });
      expect(text.code, describeRun(text)).toBe(0);
      expect(leaked(text.stdout + text.stderr), 'secrets in text output').toEqual([]);

      const sessionId = String(resultOf(run).session_id);
      for (const args of [['sessions', 'show', sessionId], ['sessions', 'show', sessionId, '-o', 'json']]) {
        const shown = await s.navi(args, { env, host: false });
        expect(shown.code, describeRun(shown)).toBe(0);
        expect(shown.stdout).toContain('[REDACTED:MY_API_TOKEN]');
        expect(leaked(shown.stdout), `secrets in navi ${args.join(' ')}`).toEqual([]);
      }

      // What the model was sent.
      expect(leaked(JSON.stringify(s.chats().map((r) => r.body))), 'secrets sent to the model').toEqual([]);
      expect(leaked(await dumpDatabase(s.db)), 'secrets in the database').toEqual([]);
    }, LONG_SCENARIO_TIMEOUT_MS);

    it('DATABASE_URL and passwords in URL-valued variables are redacted from what the shell prints', async () => {
      const urls = {
        // --ollama-host wins over this, so the run still reaches the fake.
        OLLAMA_HOST: 'http://navi:ollama-pass-777@gpu.example:11434',
        PIP_INDEX_URL: 'https://me:p%40ss-index-42@pypi.example/simple',
        MIRROR_URL: 'https://u:pw@mirror.example/',
      };
      const s = await scenario(backend, {
        turns: [{ tool_calls: [{ name: 'shell', arguments: { command: 'printenv; echo "db=$DATABASE_URL"' } }] }, { content: 'done' }],
        on_exhausted: 'error',
      });
      const run = await s.navi(['run', '-o', 'stream-json', 'show me the environment'], { env: urls });
      expect(run.code, describeRun(run)).toBe(0);
      const output = String(eventsOf(expectValidStream(run), 'tool_call')[0]?.output);
      expect(output).toContain('OLLAMA_HOST=http://navi:[REDACTED:OLLAMA_HOST]@gpu.example:11434');
      expect(output).toContain('PIP_INDEX_URL=https://me:[REDACTED:PIP_INDEX_URL]@pypi.example/simple');
      expect(output).toContain('MIRROR_URL=https://u:[REDACTED:MIRROR_URL]@mirror.example/');
      const dbUrl = s.db.env.DATABASE_URL;
      // The PostgreSQL variant runs with DATABASE_URL set (PGlite has none to show).
      if (dbUrl !== undefined) {
        expect(output).toContain('db=[REDACTED:DATABASE_URL]');
        expect(run.stdout + run.stderr).not.toContain(dbUrl);
      } else expect(output).toContain('db=\n');
      const everywhere = run.stdout + run.stderr + JSON.stringify(s.chats().map((r) => r.body)) + (await dumpDatabase(s.db));
      for (const secret of ['ollama-pass-777', 'p%40ss-index-42', ':pw@']) expect(everywhere, secret).not.toContain(secret);
    }, SCENARIO_TIMEOUT_MS);

    it('a secret cut by the shell output cap leaves no fragment behind', async () => {
      // max_output_bytes 64 keeps 32 bytes of head: 20 x's and the first 12 characters of the token.
      const s = await scenario(backend, {
        turns: [{ tool_calls: [{ name: 'shell', arguments: { command: `printf '%s' "${'x'.repeat(20)}\${MY_API_TOKEN}${'y'.repeat(200)}"` } }] }, { content: 'done' }],
        on_exhausted: 'error',
      });
      writeFiles(s.cwd, { '.nav-config.json': JSON.stringify({ tools: { shell: { max_output_bytes: 64 } } }) });
      const run = await s.navi(['run', '-o', 'stream-json', 'print a long line'], { env: SECRETS });
      expect(run.code, describeRun(run)).toBe(0);
      const output = String(eventsOf(run.events, 'tool_call')[0]?.output);
      expect(output).toMatch(/x{20}[\s\S]*y{10}/);
      // The cap (src/tools/run-command.ts, HeadTailCollector) runs before the redactor (registry).
      expect(output, 'a fragment of MY_API_TOKEN survived the cut').not.toContain(SECRETS.MY_API_TOKEN?.slice(0, 8));
      expect(leaked(await dumpDatabase(s.db))).toEqual([]);
    }, SCENARIO_TIMEOUT_MS);

    it('only tool output is redacted: what the model writes itself is passed through (documented limit)', async () => {
      // SPEC §10 names tool output, and that is what navi redacts. Text the model writes itself
      // (content, thinking, tool arguments, loop_signal reasons: a secret it decoded or guessed)
      // is streamed as it is generated and is not redacted; redacting streamed deltas would need
      // a hold-back buffer. README, "Security", says so; this pins it. If model text is ever
      // redacted, turn the last expectation around and update the README.
      const token = SECRETS.MY_API_TOKEN ?? '';
      const s = await scenario(backend, {
        turns: [
          { thinking: `the token might be ${token}`, tool_calls: [{ name: 'shell', arguments: { command: 'echo "token: $MY_API_TOKEN"' } }] },
          { content: `Your token is ${token}.` },
        ],
        on_exhausted: 'error',
      });
      const run = await s.navi(['run', '-o', 'stream-json', 'what is my token?'], { env: SECRETS });
      expect(run.code, describeRun(run)).toBe(0);
      const events = expectValidStream(run);
      const output = String(eventsOf(events, 'tool_call')[0]?.output);
      expect(output).toContain('token: [REDACTED:MY_API_TOKEN]');
      expect(leaked(output), 'secrets in tool output').toEqual([]);
      // The model's own words, as written.
      expect(leaked(run.stdout), 'the model said the token itself').toEqual([token]);
    }, SCENARIO_TIMEOUT_MS);

    it('loop mode: check output, tool output, markers, loop rows and events stay redacted', async () => {
      const s = await scenario(backend, {
        turns: [
          {
            tool_calls: [
              { name: 'shell', arguments: { command: 'echo "token: $MY_API_TOKEN"' } },
              { name: 'read_file', arguments: { path: 'creds.txt' } },
              { name: 'loop_signal', arguments: { type: 'exit', success: true, reason: 'printed the token' } },
            ],
          },
          { content: 'iteration done' },
        ],
      });
      writeFiles(s.cwd, {
        'creds.txt': CREDS,
        'tasks/leak.yaml': [
          'prompt: print the token',
          'loop: { max_iterations: 1 }',
          'checks:',
          '  - { name: env, run: \'echo "$MY_API_TOKEN $SERVICE_KEY"; exit 1\' }',
          "ticket: { run: 'echo \"$DB_PASSWORD\"' }",
          '',
        ].join('\n'),
      });
      const run = await s.navi(['loop', 'tasks/leak.yaml', '-o', 'stream-json'], { env: SECRETS, timeoutMs: 30_000 });
      expect([0, 3, 4], describeRun(run)).toContain(run.code);
      const events = expectValidStream(run);
      expect(eventsOf(events, 'iteration_status').length).toBeGreaterThan(0);
      expect(leaked(run.stdout + run.stderr), 'secrets in loop events').toEqual([]);
      const markers = readTree(path.join(s.cwd, '.agent'));
      expect(markers.size, 'a marker was written').toBeGreaterThan(0);
      for (const [file, content] of markers) expect(leaked(content), `secrets in ${file}`).toEqual([]);
      const dump = await dumpDatabase(s.db);
      expect(leaked(dump), 'secrets in the database (loop runs and iterations included)').toEqual([]);
      // The check's output tail is stored, redacted: its absence above is redaction, not silence.
      expect(dump).toContain('[REDACTED:SERVICE_KEY]');
    }, LONG_SCENARIO_TIMEOUT_MS);
  });
});
