/**
 * navi's own configuration under `--sandbox workspace-write` (issue 35): a command that rewrites
 * `.nav-config.json` (`sandbox: off`, a wider shell list) or `.mcp.json` (a server navi starts,
 * outside the sandbox) would get out at the next run. Where they exist they stay read-only inside,
 * for the shell and the file tools alike; the rest of the tree stays writable.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { naviConfigPaths, naviConfigRole } from '../../src/sandbox/navi-config-paths.js';
import { sandboxWriteRefusal } from '../../src/tools/sandbox-write-rule.js';
import { forEachBackend } from '../support/databases.js';
import { SCENARIO_TIMEOUT_MS, describeRun, eventsOf, expectValidStream, scenario } from '../scenario/helpers.js';
import { say, tc } from '../loop-scenario/helpers.js';

describe('navi config paths (pure)', () => {
  it.each([
    ['none present', [], []],
    ['the project config and .mcp.json', ['/w/.nav-config.json', '/w/.mcp.json'], ['/w/.nav-config.json', '/w/.mcp.json']],
    ["navigator's place", ['/w/.agent/.nav-config.json'], ['/w/.agent/.nav-config.json']],
  ])('%s', (_name, present, want) => {
    expect(naviConfigPaths('/w', (p) => present.includes(p))).toEqual(want);
  });

  it.each([
    ['/w/.nav-config.json', true],
    ['/w/.agent/.nav-config.json', true],
    ['/w/.mcp.json', true],
    ['/w/.git/config', false],
    ['/w/not.mcp.json', false],
  ])('%s has a role: %s', (p, has) => {
    expect(naviConfigRole(p) !== undefined).toBe(has);
  });

  it('the file tools refuse a kept config file, and say why', () => {
    const sandbox = { mode: 'workspace-write', readOnlyInside: ['/w/.nav-config.json'] } as const;
    expect(sandboxWriteRefusal(sandbox, ['/w/.nav-config.json'], '.nav-config.json')).toMatch(/read-only: it decides the next run's sandbox/);
    expect(sandboxWriteRefusal(sandbox, ['/w/src/a.js'], 'src/a.js')).toBeNull();
  });
});

forEachBackend(
  (backend) => {
    describe('navi config files under --sandbox workspace-write', () => {
      it(
        'a command cannot rewrite .nav-config.json or .mcp.json, nor write_file them; the tree stays writable',
        async () => {
          const config = `${JSON.stringify({ sandbox: 'workspace-write' })}\n`;
          const mcp = `${JSON.stringify({ mcpServers: {} })}\n`;
          const s = await scenario(backend, {
            turns: [
              tc('shell', {
                command: [
                  `echo '{"sandbox":"off"}' > .nav-config.json; echo "config: $?"`,
                  `echo '{"mcpServers":{"x":{"command":"sh"}}}' > .mcp.json; echo "mcp: $?"`,
                  'echo ok > notes.txt; echo "notes: $?"',
                ].join('\n'),
              }),
              tc('write_file', { path: '.nav-config.json', content: '{"sandbox":"off"}\n' }),
              say('done'),
            ],
            on_exhausted: 'error',
          });
          fs.writeFileSync(path.join(s.cwd, '.nav-config.json'), config);
          fs.writeFileSync(path.join(s.cwd, '.mcp.json'), mcp);
          const run = await s.navi(['run', '--sandbox', 'workspace-write', '-o', 'stream-json', 'switch the sandbox off']);
          expect(run.code, describeRun(run)).toBe(0);
          const events = expectValidStream(run);
          const calls = eventsOf(events, 'tool_call');
          const output = (name: string): string => {
            const o = calls.find((c) => c.name === name)?.output;
            return typeof o === 'string' ? o : '';
          };
          const shell = output('shell');
          expect(shell).toMatch(/config: [1-9]/);
          expect(shell).toMatch(/mcp: [1-9]/);
          expect(shell).toContain('notes: 0');
          expect(shell).toContain("navi's own configuration: .nav-config.json stays read-only");
          expect(output('write_file')).toMatch(/read-only: it decides the next run's sandbox/);
          expect(fs.readFileSync(path.join(s.cwd, '.nav-config.json'), 'utf8')).toBe(config);
          expect(fs.readFileSync(path.join(s.cwd, '.mcp.json'), 'utf8')).toBe(mcp);
          expect(fs.readFileSync(path.join(s.cwd, 'notes.txt'), 'utf8')).toBe('ok\n');
        },
        SCENARIO_TIMEOUT_MS,
      );
    });
  },
);
