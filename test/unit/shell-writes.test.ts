/** The files a shell command writes, read from its syntax tree: each command of the table with the files it writes, or none. */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { shellWrites } from '../../src/clients/shell-writes.js';
import { mayWrite, shellCommandWrites, WRITING_COMMANDS } from '../../src/clients/shell-load.js';
import { profileFor } from '../../src/clients/registry/profiles.js';

// The folder the commands run in: a.txt and sub/a.txt are files, dir/ and sub/ folders.
const cwd = mkdtempSync(join(tmpdir(), 'agent-bus-shell-'));
mkdirSync(join(cwd, 'sub'));
mkdirSync(join(cwd, 'dir'));
for (const file of ['a.txt', 'b.md', 'sub/a.txt', 'notes.log', 'old.log']) writeFileSync(join(cwd, file), 'x');
after(() => rmSync(cwd, { recursive: true, force: true }));
const home = '/home/someone';

const PATCH = ['*** Begin Patch', '*** Update File: auth.ts', '@@', "-a 'quoted", '+b', '*** Add File: docs/new.md', '+hello', '*** End Patch'].join('\n');

/** [command, the files it writes]. */
const TABLE: Array<[string, string[]]> = [
  // Redirections, every writing form; reads and descriptor copies are none.
  ['echo x > out.txt', ['out.txt']],
  ['echo x>>f', ['f']],
  ['ls &> all.txt', ['all.txt']],
  ['ls &>> all.txt', ['all.txt']],
  ['echo x >| f', ['f']],
  ['make 2> err.log', ['err.log']],
  ['echo 2>err.txt x', ['err.txt']],
  ['echo x >&file.txt', ['file.txt']],
  ['npm test 2>&1 | tail -5', []],
  ['echo x >&2', []],
  ['echo x >&2nd.txt', ['2nd.txt']],
  ['make >/dev/null 2>&1; echo x >out.txt', ['/dev/null', 'out.txt']],
  ['cat < a.txt', []],
  ['echo x > /dev/null', ['/dev/null']],
  ['echo x > "with space.txt"', ['with space.txt']],
  ["echo x > 'q.txt'", ['q.txt']],
  ['echo x > sub/../c.txt', ['c.txt']],
  ['echo x > $OUT', []],
  ['echo x > "$HOME/f"', []],
  ['echo x > ~/notes.md', [`${home}/notes.md`]],
  ['echo x > /abs/path.txt', ['/abs/path.txt']],
  // Here-documents and here-strings: the body is data, not commands.
  ["cat > f <<EOF\nrm a.txt 'unbalanced\n$(touch nothing)\nEOF", ['f']],
  ["cat > f.ts <<'EOF'\nconst a = \"x\";\nEOF\necho done > g", ['f.ts', 'g']],
  ["cat <<< 'text' > hs", ['hs']],
  // tee, sed -i, perl -i.
  ['echo x | tee out.txt', ['out.txt']],
  ['echo x | tee -a log.txt other.txt', ['log.txt', 'other.txt']],
  ['echo x |& tee f', ['f']],
  ["sed -i 's/a/b/' a.txt b.md", ['a.txt', 'b.md']],
  ["sed -i.bak -e 's/a/b/' a.txt", ['a.txt']],
  ["sed --in-place 's/a/b/' a.txt", ['a.txt']],
  ["sed -n '1,5p' a.txt", []],
  ["sed 's/a/b/' a.txt > c.txt", ['c.txt']],
  ["perl -pi -e 's/a/b/' a.txt", ['a.txt']],
  ["perl -i.bak -pe 's/a/b/' a.txt b.md", ['a.txt', 'b.md']],
  ["perl -ne 'print' a.txt", []],
  // cp, mv, install onto a file, into a folder.
  ['cp a.txt c.txt', ['c.txt']],
  ['cp a.txt dir', ['dir/a.txt']],
  ['cp a.txt newdir/', ['newdir/a.txt']],
  ['cp a.txt b.md dir', ['dir/a.txt', 'dir/b.md']],
  ['cp -t dir a.txt sub/a.txt', ['dir/a.txt']],
  ['cp --target-directory=dir b.md', ['dir/b.md']],
  ['cp -r sub dir', ['dir/sub']],
  ['mv a.txt z.txt', ['z.txt', 'a.txt']],
  ['install -m 644 a.txt dir', ['dir/a.txt']],
  ['install -d newdir', []],
  // rm, truncate.
  ['rm a.txt', ['a.txt']],
  ['rm -f -- -odd.txt', ['-odd.txt']],
  ['rm *.log', ['notes.log', 'old.log']],
  ['truncate -s 0 a.txt', ['a.txt']],
  // git checkout and restore: paths, never a branch.
  ['git checkout main', []],
  ['git checkout -b feature', []],
  ['git checkout a.txt', ['a.txt']],
  ['git checkout -- a.txt', ['a.txt']],
  ['git checkout main -- x.ts y.ts', ['x.ts', 'y.ts']],
  ['git checkout HEAD~1 -- sub/a.txt', ['sub/a.txt']],
  ['git restore a.txt', ['a.txt']],
  ['git restore --source main gone.txt', ['gone.txt']],
  ['git restore --staged a.txt', []],
  ['git restore --staged --worktree a.txt', ['a.txt']],
  ['git -C sub checkout -- a.txt', ['sub/a.txt']],
  ['git status && git diff', []],
  // Lists, pipes, subshells, groups, cd.
  ['cd sub && rm a.txt', ['sub/a.txt']],
  ['cd sub && echo x > b', ['sub/b']],
  ['(cd sub; echo > b); echo > c', ['sub/b', 'c']],
  ['cd sub; cd ..; rm a.txt', ['a.txt']],
  ['{ echo a; echo b > d; }', ['d']],
  ['{ cd sub; echo; } > group.txt', ['group.txt']],
  ['true || rm a.txt', ['a.txt']],
  ['cd /tmp && rm x', ['/tmp/x']],
  ['cd "$DIR" && rm a.txt', []],
  ['echo $(rm gone.txt) > f', ['gone.txt', 'f']],
  ['if [ -f a.txt ]; then rm a.txt; fi', ['a.txt']],
  ['for f in a b; do echo "$f" >> list.txt; done', ['list.txt']],
  ['sudo rm -f s.txt', ['s.txt']],
  ['env X=1 rm e.txt', ['e.txt']],
  ['/bin/rm a.txt', ['a.txt']],
  // bash -c and sh -c: the script parsed in turn; its cd is its own.
  ["bash -c 'echo hi > f'", ['f']],
  ['sh -c "cd sub && rm a.txt"; rm b.md', ['sub/a.txt', 'b.md']],
  ["bash -lc 'sed -i s/a/b/ a.txt'", ['a.txt']],
  // apply_patch through the shell (Codex): a here-document, a pipe, an argument; under a cd.
  [`apply_patch <<'EOF'\n${PATCH}\nEOF`, ['auth.ts', 'docs/new.md']],
  [`cd src && apply_patch <<'EOF'\n${PATCH}\nEOF\n`, ['src/auth.ts', 'src/docs/new.md']],
  [`cat <<'EOF' | apply_patch\n${PATCH}\nEOF`, ['auth.ts', 'docs/new.md']],
  [`printf '%s' '${PATCH.replace("'quoted", 'plain')}' | apply_patch`, ['auth.ts', 'docs/new.md']],
  [`applypatch <<'EOF'\n${PATCH}\nEOF`, ['auth.ts', 'docs/new.md']],
  [`cat <<'EOF'\n${PATCH}\nEOF`, []],
  // What cannot be read for certain is let through.
  [`python -c "open('f','w').write('x')"`, []],
  ['node -e "require(\'fs\').writeFileSync(\'f\', \'x\')"', []],
  ['eval "echo x > f"', []],
  ['./build.sh', []],
  ["echo 'unterminated > f", []],
  ['echo x > (', []],
  // The grammar knows no `<>`: a syntax error, let through.
  ['exec 3<> rw.txt', []],
  ['ls -la', []],
  ['', []],
];

test('each command of the table writes exactly its files', async () => {
  for (const [command, files] of TABLE) {
    assert.deepEqual((await shellWrites(command, { cwd, home })).sort(), [...files].sort(), command);
  }
});

test('the gate before the parser lets through every command of the table that writes, and none of those it spares writes', async () => {
  for (const [command, files] of TABLE) {
    // (/dev/null is in no repo: the gate may spare a command that writes only there.)
    if (files.some((file) => !file.startsWith('/dev/'))) assert.ok(mayWrite(command), `the gate must let through: ${command}`);
  }
  for (const command of ['ls -la', 'cat a.txt', 'npm test 2>&1 | tail -5', 'grep -rn foo src 2>/dev/null', 'node --version >&2', 'make > /dev/null 2>&1']) {
    assert.equal(mayWrite(command), false, command);
    assert.deepEqual(await shellCommandWrites(command, cwd), []);
  }
  // Every command the reader knows is one the gate knows: each writes something in the table.
  for (const name of WRITING_COMMANDS) {
    assert.ok(TABLE.some(([command, files]) => files.length > 0 && command.includes(name)), name);
  }
});

test("Claude Code's Bash and Codex's shell tool name the files their command writes; Codex's workdir is where it runs", async () => {
  for (const client of ['claude', 'codex']) {
    const writes = profileFor(client).writtenFiles;
    assert.ok(writes);
    assert.deepEqual(await writes({ tool_name: 'Bash', cwd, tool_input: { command: 'cd sub && echo x > b.txt' } }), ['sub/b.txt'], client);
    assert.deepEqual(await writes({ tool_name: 'Bash', cwd, tool_input: { command: 'git checkout main' } }), [], client);
  }
  const codex = profileFor('codex').writtenFiles;
  assert.ok(codex);
  assert.deepEqual(await codex({ tool_name: 'Bash', cwd, tool_input: { command: 'git checkout a.txt', workdir: 'sub' } }), ['sub/a.txt']);
});

test("Gemini CLI's run_shell_command (in its dir_path), Copilot CLI's shell tool and opencode's bash name the files their command writes", async () => {
  for (const [client, tool] of [['gemini', 'run_shell_command'], ['copilot', 'bash'], ['copilot', 'Bash'], ['opencode', 'bash']] as const) {
    const writes = profileFor(client).writtenFiles;
    assert.ok(writes);
    assert.deepEqual(await writes({ tool_name: tool, cwd, tool_input: { command: 'cd sub && echo x > b.txt' } }), ['sub/b.txt'], `${client} ${tool}`);
    assert.deepEqual(await writes({ tool_name: tool, cwd, tool_input: { command: 'cat a.txt' } }), [], `${client} ${tool}`);
  }
  const gemini = profileFor('gemini').writtenFiles;
  assert.ok(gemini);
  assert.deepEqual(await gemini({ tool_name: 'run_shell_command', cwd, tool_input: { command: 'rm a.txt', dir_path: 'sub' } }), ['sub/a.txt']);
});
