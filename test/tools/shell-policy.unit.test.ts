import { describe, expect, it } from 'vitest';
import { DEFAULT_SHELL_DENY, checkShellCommand, globToRegExp } from '../../src/tools/shell-policy.js';

const defaults = { allow: [] as string[], deny: DEFAULT_SHELL_DENY };

describe('globToRegExp', () => {
  it.each([
    ['npm *', 'npm test', true],
    ['npm *', 'npm', false],
    ['npm*', 'npm', true],
    ['git st?tus', 'git status', true],
    ['git st?tus', 'git stttatus', false],
    ['rm -rf /\\*', 'rm -rf /*', true],
    ['rm -rf /\\*', 'rm -rf /tmp', false],
    ['dd * of=/dev/*', 'dd if=/dev/zero of=/dev/sda bs=1M', true],
    ['a.b', 'axb', false],
    ['(x)', '(x)', true],
    ['echo   hi', 'echo hi', true],
  ])('%s vs %s → %s', (glob, text, expected) => {
    expect(globToRegExp(glob).test(text)).toBe(expected);
  });
});

describe('checkShellCommand with the default deny list', () => {
  it.each([
    'ls -la',
    'npm test',
    'git status && git diff',
    'rm -rf /tmp/build',
    'rm -rf ./dist',
    'echo "rm -rf /"',
    "grep -r 'sudo' .",
    'git push origin main',
    'git push --set-upstream origin feature',
    'git push origin feature-+x',
    'git push --follow-tags origin main',
    'rm -rf /tmp/build',
    'rm -r -f ./node_modules',
    'rm -rf ~/.cache/navi-test',
    'rm -rf build/ dist/',
    'make 2>&1 | tail -n 20',
    'echo hi >&2',
    'ls &>/dev/null',
    'FOO=1 node script.js',
    'for f in *.ts; do echo $f; done',
    'if [ -f x ]; then cat x; fi',
    'echo ok # ; rm -rf /',
    'cat <<EOF\nhello\nEOF',
  ])('allows %j', (command) => {
    expect(checkShellCommand(command, defaults)).toEqual({ allowed: true });
  });

  it.each([
    ['rm -rf /', 'rm * /'],
    ['rm -rf /*', 'rm * /\\*'],
    ['rm   -rf   /', 'rm * /'],
    ["rm -rf '/'", 'rm * /'],
    ['/bin/rm -rf /', 'rm * /'],
    ['rm -rf ~', 'rm * ~'],
    ['rm -rf "$HOME"', 'rm * $HOME'],
    ['rm -rf --no-preserve-root /', 'rm * /'],
    ['rm -rf --no-preserve-root /home', 'rm *--no-preserve-root*'],
    ['mkfs.ext4 /dev/sda1', 'mkfs*'],
    ['dd if=/dev/zero of=/dev/sda', 'dd * of=/dev/*'],
    ['shutdown -h now', 'shutdown*'],
    ['reboot', 'reboot*'],
    [':(){ :|:& };:', ':(){*'],
    ['git push --force origin main', 'git push --force*'],
    ['git push origin main --force', 'git push * --force*'],
    ['git push -f', 'git push -f*'],
    // Spellings the first default list missed.
    ['rm -r -f /', 'rm * /'],
    ['rm -R -f /', 'rm * /'],
    ['rm -f -r /*', 'rm * /\\*'],
    ['rm --recursive --force /', 'rm * /'],
    ['rm -rf -- /', 'rm * /'],
    ['rm -rf / tmp/build', 'rm * / *'],
    ['rm -r -f ~/', 'rm * ~/'],
    ['rm -rf ${HOME}', 'rm * ${HOME}'],
    ['git push origin +main', 'git push * +*'],
    ['git push origin +HEAD:main', 'git push * +*'],
    ['git push +main', 'git push +*'],
    ['git push --force-with-lease origin main', 'git push --force*'],
    ['git push origin main --force-with-lease', 'git push * --force*'],
    ['git push --mirror backup', 'git push --mirror*'],
    ['git push backup --mirror', 'git push * --mirror*'],
    ['sudo apt-get install x', 'sudo *'],
    // Smuggling: the denied command rides behind or inside an allowed one.
    ['echo ok; rm -rf /', 'rm * /'],
    ['x && rm -rf /', 'rm * /'],
    ['false || rm -rf /', 'rm * /'],
    ['cat x | sudo tee /etc/hosts', 'sudo *'],
    ['sleep 1 & rm -rf /', 'rm * /'],
    ['echo ok\nrm -rf /', 'rm * /'],
    ['`rm -rf /`', 'rm * /'],
    ['echo `rm -rf /`', 'rm * /'],
    ['$(rm -rf /)', 'rm * /'],
    ['echo "$(rm -rf /)"', 'rm * /'],
    ['echo $(echo $(rm -rf /))', 'rm * /'],
    ['diff <(rm -rf /) x', 'rm * /'],
    ["sh -c 'rm -rf /'", 'rm * /'],
    ['bash -c "rm -rf /"', 'rm * /'],
    ["bash -lc 'echo hi; rm -rf /'", 'rm * /'],
    ["/bin/sh -o pipefail -c 'rm -rf /'", 'rm * /'],
    ["sh -c \"sh -c 'rm -rf /'\"", 'rm * /'],
    ["eval 'rm -rf /'", 'rm * /'],
    ['( rm -rf / )', 'rm * /'],
    ['{ rm -rf /; }', 'rm * /'],
    ['if true; then rm -rf /; fi', 'rm * /'],
    ['nohup rm -rf / &', 'rm * /'],
    ['env FOO=1 rm -rf /', 'rm * /'],
    ['timeout 5 rm -rf /', 'rm * /'],
    ['X=1 sudo ls', 'sudo *'],
  ])('denies %j (pattern %s)', (command, pattern) => {
    const verdict = checkShellCommand(command, defaults);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) {
      expect(verdict.matched).toBe(pattern);
      expect(verdict.reason).toContain(`deny pattern '${pattern}'`);
    }
  });
});

describe('checkShellCommand with an allow list', () => {
  const policy = { allow: ['npm *', 'git status', 'git diff*', 'ls*', 'echo *'], deny: ['npm publish*'] };

  it.each([
    'npm test',
    'git status',
    'git diff --stat && npm run build',
    'ls',
    'CI=1 npm test',
    'echo "$(git status)"',
    'if npm test; then echo ok; fi',
  ])('allows %j', (command) => {
    expect(checkShellCommand(command, policy)).toEqual({ allowed: true });
  });

  it.each([
    ['curl http://x', 'curl http://x'],
    ['npm test; curl http://x', 'curl http://x'],
    ['echo $(curl http://x)', 'curl http://x'],
    ["sh -c 'npm test'", "sh -c npm test"],
    ['git push', 'git push'],
    ['echo hi <<EOF\ncurl body\nEOF\ncurl x', 'curl x'],
  ])('refuses %j (not allowed: %s)', (command, segment) => {
    const verdict = checkShellCommand(command, policy);
    expect(verdict.allowed).toBe(false);
    if (!verdict.allowed) {
      expect(verdict.matched).toBe(segment);
      expect(verdict.reason).toContain('matches no allow pattern');
    }
  });

  it.each([
    "cat > notes.md <<'EOF'\nsudo is mentioned here; rm -rf / too\nEOF\nls",
    'cat <<-EOF\n\tcurl http://x\n\tEOF',
    'echo x <<< "curl http://y"',
  ])('treats heredoc and here-string bodies as data: %j', (command) => {
    expect(checkShellCommand(command, { allow: ['cat *', 'ls', 'echo *'], deny: [...DEFAULT_SHELL_DENY] })).toEqual({
      allowed: true,
    });
  });

  it('still checks substitutions inside an unquoted heredoc', () => {
    const verdict = checkShellCommand('cat <<EOF\n$(rm -rf /)\nEOF', { allow: ['cat *'], deny: [...DEFAULT_SHELL_DENY] });
    expect(verdict).toMatchObject({ allowed: false, matched: 'rm * /' });
    const unterminated = checkShellCommand('cat <<EOF\n`sudo x`', { allow: [], deny: [...DEFAULT_SHELL_DENY] });
    expect(unterminated).toMatchObject({ allowed: false, matched: 'sudo *' });
  });

  it('lets deny win over allow', () => {
    const verdict = checkShellCommand('npm publish --tag next', policy);
    expect(verdict).toMatchObject({ allowed: false, matched: 'npm publish*' });
  });

  it('checks allowed wrappers by what they run', () => {
    const verdict = checkShellCommand("echo ok && bash -c 'curl x'", { allow: ['echo *', 'bash *'], deny: [] });
    expect(verdict).toMatchObject({ allowed: false, matched: 'curl x' });
  });
});

describe('the default deny list is a list of spellings (documented limits, docs/THREAT-MODEL.md)', () => {
  it.each(['rm -rf /.', 'rm -rf //', 'git -C . push -f', 'git push -uf'])('%j is not on it', (command) => {
    expect(checkShellCommand(command, defaults)).toEqual({ allowed: true });
  });
});

describe('checkShellCommand with an empty policy', () => {
  it('allows everything, including empty commands', () => {
    expect(checkShellCommand('rm -rf /', { allow: [], deny: [] })).toEqual({ allowed: true });
    expect(checkShellCommand('', { allow: [], deny: [] })).toEqual({ allowed: true });
  });

  it('refuses absurd nesting instead of recursing forever', () => {
    let command = 'ls';
    for (let i = 0; i < 12; i++) command = `echo "$(${command})"`;
    expect(checkShellCommand(command, { allow: [], deny: [] }).allowed).toBe(false);
  });
});

describe('checkShellCommand: wrapper options that take a value, and here-strings', () => {
  const policy = { allow: [] as string[], deny: ['touch', 'touch *'] };

  // Each of these runs `touch S`; a wrapper option whose value was taken for the command (or a
  // here-string read as a heredoc) used to hide it.
  it.each([
    ['here-string, then a command on the next line', 'cat <<< x\ntouch S'],
    ['here-string without spaces', 'cat<<<x\ntouch S'],
    ['here-string inside bash -c', "bash -c 'cat <<< x\ntouch S\nx'"],
    ['here-string holding a substitution', 'cat <<< "$(touch S)"'],
    ['env -S attached', "env -S'touch S'"],
    ['env -S separate', "env -S 'touch S'"],
    ['env -S in a cluster', "env -iS'touch S'"],
    ['env -S with env options inside', "env -S'-i FOO=1 touch S'"],
    ['env -S then more words', "env -S'touch' S"],
    ['env --split-string=', "env --split-string='touch S'"],
    ['env --split-string separate', "env --split-string 'touch S'"],
    ['env abbreviated --split=', "env --split='touch S'"],
    ['env -S nested twice', `env -S"env -S'touch S'"`],
    ['env -C DIR', 'env -C . touch S'],
    ['env -CDIR', 'env -C. touch S'],
    ['env --chdir DIR', 'env --chdir . touch S'],
    ['env --chdir=DIR', 'env --chdir=. touch S'],
    ['env -u NAME', 'env -u HOME touch S'],
    ['env --unset NAME', 'env --unset HOME touch S'],
    ['stdbuf -o MODE', 'stdbuf -o 0 touch S'],
    ['stdbuf -i MODE', 'stdbuf -i 0 touch S'],
    ['stdbuf -e MODE', 'stdbuf -e L touch S'],
    ['stdbuf -oL attached', 'stdbuf -oL touch S'],
    ['stdbuf --output MODE', 'stdbuf --output 0 touch S'],
    ['stdbuf --output=MODE', 'stdbuf --output=0 touch S'],
    ['exec -a NAME', 'exec -a x touch S'],
    ['exec -la NAME', 'exec -la x touch S'],
    ['exec -a inside bash -c', "bash -c 'exec -a x touch S'"],
    ['nice -n N', 'nice -n 5 touch S'],
    ['nice --adjustment N', 'nice --adjustment 5 touch S'],
    ['nice -5', 'nice -5 touch S'],
    ['timeout -k DUR', 'timeout -k 5 10 touch S'],
    ['timeout --signal SIG', 'timeout --signal KILL 10 touch S'],
    ['timeout -s SIG', 'timeout -s KILL 10 touch S'],
    ['wrappers stacked', 'nohup env -C . stdbuf -o 0 nice -n 1 timeout 5 touch S'],
  ])('denies %s: %j', (_what, command) => {
    expect(checkShellCommand(command, policy)).toMatchObject({ allowed: false });
  });

  it.each([
    ['a here-string is data', 'cat <<< "touch S"'],
    ['env -S running something else', "env -S'echo touch'"],
    ['env -C DIR running something else', 'env -C touch echo hi'],
    ['stdbuf MODE that looks like the command', 'stdbuf -o touch echo hi'],
    ['exec -a NAME that looks like the command', 'exec -a touch echo hi'],
  ])('allows %s: %j', (_what, command) => {
    expect(checkShellCommand(command, policy)).toEqual({ allowed: true });
  });

  it('checks an env -S command line against the allow list', () => {
    const allowList = { allow: ['npm *'], deny: [] };
    expect(checkShellCommand("env -S'npm test'", allowList)).toEqual({ allowed: true });
    expect(checkShellCommand("env -S'curl http://x'", allowList)).toMatchObject({ allowed: false, matched: 'env curl http://x' });
  });
});
