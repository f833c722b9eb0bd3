/**
 * Path confinement through the built CLI (SPEC §10, issue 5 item 3): the model (a scripted fake
 * Ollama) points every file tool at `..`, absolute paths, symlinks out (file, directory,
 * dangling, to `/`, and symlinks the shell creates mid-run), NUL bytes and over-long paths.
 * Each is refused as a tool result; a sentinel file outside the working directory stays
 * untouched and its content appears nowhere: not in events, stderr or any database row.
 * `%2e%2e` and Unicode look-alikes of `..` are plain names and stay inside.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forEachBackend } from '../support/databases.js';
import type { FakeToolCall } from '../support/fake-ollama.js';
import { describeRun, eventsOf, expectValidStream, LONG_SCENARIO_TIMEOUT_MS, scenario } from '../scenario/helpers.js';
import { dumpDatabase, makeSentinel, sentinelChanges } from './helpers.js';

/** Names that look like `..` to a person or a URL decoder but are ordinary names to the filesystem. */
const LITERAL_NAMES = ['%2e%2e', '%2e%2e%2f%2e%2e%2fx', '．．', '‥', '..\u2215x', '.\u200b.', '..\\x', '...', '.. '];

forEachBackend((backend) => {
  describe('path confinement', () => {
    it('every escape is refused as a result; nothing outside is read or written; look-alikes stay inside', async () => {
      const sentinel = makeSentinel();
      // Placeholders: the working directory exists only once the scenario starts.
      const s = await scenario(backend, { turns: [] });
      const cwd = s.cwd;
      const relOut = path.relative(cwd, sentinel.file);
      fs.symlinkSync(sentinel.file, path.join(cwd, 'link-file'));
      fs.symlinkSync(sentinel.dir, path.join(cwd, 'link-dir'));
      fs.symlinkSync(path.join(sentinel.dir, 'created-through-dangling.txt'), path.join(cwd, 'dangling'));
      fs.symlinkSync('/', path.join(cwd, 'root-link'));
      fs.symlinkSync('link-dir', path.join(cwd, 'chain'));
      fs.writeFileSync(path.join(cwd, 'inside.txt'), 'inside\n');

      const refused: FakeToolCall[] = [
        { name: 'read_file', arguments: { path: relOut } },
        { name: 'read_file', arguments: { path: sentinel.file } },
        { name: 'read_file', arguments: { path: '/etc/passwd' } },
        { name: 'read_file', arguments: { path: '~/.bashrc' } },
        { name: 'read_file', arguments: { path: 'link-file' } },
        { name: 'read_file', arguments: { path: 'link-dir/secret.txt' } },
        { name: 'read_file', arguments: { path: 'chain/secret.txt' } },
        { name: 'read_file', arguments: { path: 'root-link/etc/passwd' } },
        { name: 'read_file', arguments: { path: `inside.txt/../${relOut}` } },
        { name: 'read_file', arguments: { path: 'a\u0000b' } },
        { name: 'read_file', arguments: { path: `${'a/'.repeat(3000)}x` } },
        { name: 'list_dir', arguments: { path: 'link-dir' } },
        { name: 'list_dir', arguments: { path: '..' } },
        { name: 'list_dir', arguments: { path: '/' } },
        { name: 'search_files', arguments: { pattern: 'OUTSIDE', path: 'link-dir' } },
        { name: 'search_files', arguments: { pattern: 'OUTSIDE', path: '..' } },
        { name: 'search_files', arguments: { pattern: 'OUTSIDE', path: sentinel.dir } },
        { name: 'write_file', arguments: { path: path.join(path.dirname(relOut), 'new.txt'), content: 'x' } },
        { name: 'write_file', arguments: { path: path.join(sentinel.dir, 'new.txt'), content: 'x' } },
        { name: 'write_file', arguments: { path: 'link-dir/new.txt', content: 'x' } },
        { name: 'write_file', arguments: { path: 'link-file', content: 'overwritten' } },
        { name: 'write_file', arguments: { path: 'dangling', content: 'x' } },
        { name: 'write_file', arguments: { path: 'x'.repeat(300), content: 'x' } },
        { name: 'edit_file', arguments: { path: 'link-file', old_string: 'OUTSIDE', new_string: 'edited' } },
        { name: 'edit_file', arguments: { path: relOut, old_string: 'OUTSIDE', new_string: 'edited' } },
      ];
      const literal: FakeToolCall[] = LITERAL_NAMES.map((name, i) => ({ name: 'write_file', arguments: { path: `${name}/lit${i}.txt`, content: `literal ${i}\n` } }));
      const later: FakeToolCall[] = [
        { name: 'read_file', arguments: { path: 'mid-link' } },
        { name: 'read_file', arguments: { path: 'mid-dir/secret.txt' } },
        { name: 'list_dir', arguments: { path: 'mid-dir' } },
        { name: 'write_file', arguments: { path: 'mid-dir/evil.txt', content: 'x' } },
        { name: 'edit_file', arguments: { path: 'mid-link', old_string: 'OUTSIDE', new_string: 'edited' } },
      ];
      s.fake.setScript({
        turns: [
          { tool_calls: refused },
          { tool_calls: literal },
          // The shell may do what it likes (it is not a sandbox); the file tools must not follow it out.
          { tool_calls: [{ name: 'shell', arguments: { command: `ln -s '${sentinel.file}' mid-link && ln -s '${sentinel.dir}' mid-dir` } }] },
          { tool_calls: later },
          // An unconfined search from the root must not descend through the directory symlinks.
          { tool_calls: [{ name: 'search_files', arguments: { pattern: 'OUTSIDE-SENTINEL' } }] },
          { content: 'done' },
        ],
        on_exhausted: 'error',
      });

      const run = await s.navi(['run', '-o', 'stream-json', 'probe the fence'], { timeoutMs: 30_000 });
      expect(run.code, describeRun(run)).toBe(0);
      const calls = eventsOf(expectValidStream(run), 'tool_call');
      expect(calls).toHaveLength(refused.length + literal.length + 1 + later.length + 1);

      const byIndex = (from: number, count: number) => calls.slice(from, from + count);
      const notOk = [...byIndex(0, refused.length), ...byIndex(refused.length + literal.length + 1, later.length)];
      const wrongly = notOk.filter((c) => c.ok !== false).map((c) => `${String(c.name)} ${JSON.stringify(c.arguments)} → ${String(c.output).slice(0, 120)}`);
      expect(wrongly, 'escapes that were not refused').toEqual([]);

      // The mid-run symlinks were made (the shell ran) and then not followed.
      expect(fs.lstatSync(path.join(cwd, 'mid-link')).isSymbolicLink()).toBe(true);
      expect(String(calls.at(-1)?.output)).toMatch(/no matches/);

      expect(sentinelChanges(sentinel)).toEqual([]);
      expect(fs.existsSync(path.join(path.dirname(cwd), 'new.txt'))).toBe(false);
      expect(run.stdout).not.toContain(sentinel.content);
      expect(run.stderr).not.toContain(sentinel.content);
      const dump = await dumpDatabase(s.db);
      expect(dump.length).toBeGreaterThan(0);
      expect(dump).not.toContain(sentinel.content);
      expect(dump).not.toMatch(/root:x:0:0/);

      // Look-alikes are names (`...`, `..\\x`, `..∕x`, `.. ` included: only `..` itself is the parent): written inside the working directory, under exactly that name.
      const lits = byIndex(refused.length, literal.length);
      expect(lits.map((c) => [c.arguments, c.ok, c.ok === true ? "" : String(c.output)])).toEqual(literal.map((c) => [c.arguments, true, ""]));
      LITERAL_NAMES.forEach((name, i) => expect(fs.readFileSync(path.join(cwd, name, `lit${i}.txt`), 'utf8')).toBe(`literal ${i}\n`));
    }, LONG_SCENARIO_TIMEOUT_MS);
  });
});
