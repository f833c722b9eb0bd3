import { describe, expect, it } from 'vitest';
import { parseRunFast } from '../../src/cli/fast-run.js';
import { editDistance, expandShorthand, firstPositional, mistypedCommand } from '../../src/cli/shorthand.js';

describe('expandShorthand (navi "prompt" = navi run "prompt")', () => {
  it.each([
    [[], []],
    [['--help'], ['--help']],
    [['-V'], ['-V']],
    [['help'], ['--help']],
    [['run', 'x'], ['run', 'x']],
    [['sessions', 'list'], ['sessions', 'list']],
    [['fix the tests'], ['run', 'fix the tests']],
    [['-o', 'json', 'fix the tests'], ['run', '-o', 'json', 'fix the tests']],
    [['-p', 'coder', 'fix', 'it'], ['run', '-p', 'coder', 'fix', 'it']],
    [['--profile=coder', 'summarise', 'it'], ['run', '--profile=coder', 'summarise', 'it']],
    [['-q', 'hello there'], ['run', '-q', 'hello there']],
    [['why?'], ['run', 'why?']],
    [['--', 'status'], ['run', '--', 'status']],
    [['version'], ['--version']],
    // Issue 18 item 8: a flag with a value before the command leaves the command a command.
    [['--replay', 'rec.jsonl', 'loop', 'tasks/fix.yaml'], ['--replay', 'rec.jsonl', 'loop', 'tasks/fix.yaml']],
    [['--record', 'r.jsonl', '--decisions', 'd.jsonl', 'loop', 'x.yaml'], ['--record', 'r.jsonl', '--decisions', 'd.jsonl', 'loop', 'x.yaml']],
    [['--limit', '5', 'runs', 'list'], ['--limit', '5', 'runs', 'list']],
    [['--', 'run'], ['run', '--', 'run']],
    [['-p', 'coder', 'loop', 'tasks/x.yaml'], ['-p', 'coder', 'loop', 'tasks/x.yaml']],
  ])('%j → %j', (args, want) => {
    expect(expandShorthand(args)).toEqual(want);
  });

  it.each([
    [['-p', 'summarise the README'], /-p is navi's --profile \(here 'summarise the README'\)/],
    [['-o', 'json'], /no command and no prompt in: -o json/],
    [['--cwd', '/tmp', '-q'], /no command and no prompt/],
    [['sesions', 'list'], /unknown command 'sesions'\. Did you mean sessions\?/],
    [['rnu', 'x'], /Did you mean run\?/],
    [['doctr'], /Did you mean doctor\?/],
    // Issue 18 item 9: one bare word is not a prompt.
    ...['status', 'list', 'show', 'resume', 'config', 'models', 'update', 'ls'].map((w): [string[], RegExp] => [[w], /quote it or use navi run/]),
    [['-p', 'coder', 'summarise'], /unknown command 'summarise', and one word is not taken as a prompt/],
    [['tasks/fix.yaml'], /A task file runs with: navi loop 'tasks\/fix.yaml'/],
  ])('%j is exit 2: %s', (args, message) => {
    expect(() => expandShorthand(args)).toThrow(message);
  });

  it('finds the first positional past options that take a value', () => {
    expect(firstPositional(['-m', 'x', '--quiet', 'go'])).toBe(3);
    expect(firstPositional(['--model=x', 'go'])).toBe(1);
    expect(firstPositional(['-o', 'json'])).toBeUndefined();
  });

  it('a typo is a bare word near a command; words with spaces and other words are prompts', () => {
    expect(mistypedCommand('sesions')).toBe('sessions');
    expect(mistypedCommand('tsks')).toBe('tasks');
    expect(mistypedCommand('explain')).toBeUndefined();
    expect(mistypedCommand('fix')).toBeUndefined();
    expect(mistypedCommand('run this')).toBeUndefined();
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('parseRunFast: the convention flags', () => {
  it('reads aliases and the new flags as yargs would', () => {
    expect(
      parseRunFast([
        'run',
        '--output-format',
        'json',
        '--max-turns',
        '4',
        '-c',
        '--output-schema',
        's.json',
        '--output-last-message',
        'out.txt',
        '--append-system-prompt',
        'Be brief.',
        '--allowed-tools',
        'read_file,list_dir',
        '--disallowed-tools',
        'shell',
        '--no-project-instructions',
        '--print',
        'go',
      ]),
    ).toEqual({
      output: 'json',
      quiet: false,
      color: true,
      prompt: ['go'],
      maxIterations: 4,
      continue: true,
      outputSchema: 's.json',
      outputLastMessage: 'out.txt',
      appendSystemPrompt: 'Be brief.',
      allowedTools: 'read_file,list_dir',
      disallowedTools: 'shell',
      projectInstructions: false,
      print: true,
    });
  });

  it('leaves a flag given under both its names to yargs', () => {
    expect(parseRunFast(['run', '-o', 'json', '--output-format', 'text', 'x'])).toBeNull();
    expect(parseRunFast(['run', '--max-iterations', '2', '--max-turns', '3', 'x'])).toBeNull();
  });
});
