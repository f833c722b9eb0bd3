/** The tool ceiling (a sub-agent or profile switch never widens the tool set), table-driven. */
import { describe, expect, it } from 'vitest';
import { capTools, droppedToolsNote } from '../../src/agent/tool-ceiling.js';

describe('capTools', () => {
  const researcher = ['read_file', 'list_dir', 'search_files', 'todo', 'scratchpad', 'plan', 'spawn_agent'];
  const cases: Array<[string, string[], string[] | undefined, string[], string[]]> = [
    ['no ceiling keeps everything', ['shell', 'read_file'], undefined, ['shell', 'read_file'], []],
    ['a read-only ceiling drops shell and writes', ['read_file', 'write_file', 'edit_file', 'shell', 'plan'], researcher, ['read_file', 'plan'], ['write_file', 'edit_file', 'shell']],
    ['a narrower profile keeps its own order', ['plan', 'read_file'], researcher, ['plan', 'read_file'], []],
    ['an empty ceiling drops all', ['read_file'], [], [], ['read_file']],
    ['an empty profile keeps nothing, drops nothing', [], researcher, [], []],
  ];
  it.each(cases)('%s', (_what, wanted, ceiling, kept, dropped) => {
    expect(capTools(wanted, ceiling)).toEqual({ kept, dropped });
  });
});

describe('droppedToolsNote', () => {
  it('is empty when nothing was dropped, else names the tools', () => {
    expect(droppedToolsNote([])).toBe('');
    expect(droppedToolsNote(['shell', 'write_file'])).toBe('without shell, write_file: a sub-agent or profile switch only gets tools you already have');
  });
});
