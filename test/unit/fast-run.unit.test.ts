import { describe, expect, it } from 'vitest';
import { parseRunFast } from '../../src/cli/fast-run.js';

describe('parseRunFast', () => {
  it.each([
    [['run', 'hello', 'world'], { output: 'text', quiet: false, color: true, prompt: ['hello', 'world'] }],
    [['run', '-o', 'json', '-q', 'x'], { output: 'json', quiet: true, color: true, prompt: ['x'] }],
    [['run', '--output=stream-json', '--no-color', '--max-iterations', '3', 'x'], { output: 'stream-json', quiet: false, color: false, prompt: ['x'], maxIterations: 3 }],
    [
      ['run', '--ollama-host', 'http://h:1', '-m', 'm1', '-p', 'coder', '--db', 'postgres://x', '--cwd', '/tmp', '--config', 'c.json', '-s', 'S', 'go'],
      { output: 'text', quiet: false, color: true, prompt: ['go'], ollamaHost: 'http://h:1', model: 'm1', profile: 'coder', db: 'postgres://x', cwd: '/tmp', config: 'c.json', session: 'S' },
    ],
    [['run', '--no-loop', '-f', 'p.txt'], { output: 'text', quiet: false, color: true, prompt: [], file: 'p.txt', loop: false }],
    [['run', '--', '-not-a-flag'], { output: 'text', quiet: false, color: true, prompt: ['-not-a-flag'] }],
    // Global flags before the command, as scripts write them.
    [['--ollama-host', 'http://h:1', 'run', 'go'], { output: 'text', quiet: false, color: true, prompt: ['go'], ollamaHost: 'http://h:1' }],
    [['-o', 'json', '-q', '--no-color', 'run', '-m', 'm1', 'x'], { output: 'json', quiet: true, color: false, prompt: ['x'], model: 'm1' }],
    [['--db=postgres://x', 'run', '--', 'run'], { output: 'text', quiet: false, color: true, prompt: ['run'], db: 'postgres://x' }],
  ])('%j', (args, want) => {
    expect(parseRunFast(args)).toEqual(want);
  });

  it.each([
    [['sessions', 'list']],
    [['run', '--help']],
    [['run', '--bogus', 'x']],
    [['run', '-o', 'yaml', 'x']],
    [['run', '-o', 'json', '-o', 'text', 'x']],
    [['run', '--model']],
    [['--quiet', 'loop', 'run']],
    [['--', 'run', 'x']],
    // A flag of `run` alone before the command, or a global flag given on both sides.
    [['--max-iterations', '3', 'run', 'x']],
    [['--ollama-host', 'http://a:1', 'run', '--ollama-host', 'http://b:1', 'x']],
    [['--bogus', 'run', 'x']],
  ])('leaves %j to yargs', (args) => {
    expect(parseRunFast(args)).toBeNull();
  });
});
