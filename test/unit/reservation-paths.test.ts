import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coversFile, patternsOverlap, reservationPath } from '../../src/core/reservation-paths.js';

const ROOT = '/home/dev/shop';
const sensitive = { nocase: false };

function overlaps(a: string, b: string, options = sensitive): boolean {
  const forward = patternsOverlap(a, b, options);
  assert.equal(patternsOverlap(b, a, options), forward, `overlap of ${a} and ${b} is the same both ways`);
  return forward;
}

test('a reserved path is made relative to the repo root, POSIX, without . segments; dir/ holds what is below it', () => {
  assert.equal(reservationPath('src/auth.ts', ROOT), 'src/auth.ts');
  assert.equal(reservationPath('./src//auth.ts', ROOT), 'src/auth.ts');
  assert.equal(reservationPath(`${ROOT}/src/auth.ts`, ROOT), 'src/auth.ts');
  assert.equal(reservationPath(`${ROOT}/src/`, `${ROOT}/`), 'src/**');
  assert.equal(reservationPath('src/', ROOT), 'src/**');
  assert.equal(reservationPath('src/**/', ROOT), 'src/**');
  assert.equal(reservationPath('src/{a,b}.ts', ROOT), 'src/{a,b}.ts');
});

test('a path outside the repo, through .., with a NUL byte or a control character, empty, the whole repo or negated is refused in one line', () => {
  const refusals: Array<[string, RegExp]> = [
    ['../other/file.ts', /leaves the repo through '\.\.'/],
    ['src/../../etc/passwd', /leaves the repo/],
    ['/etc/passwd', /is outside the repo '\/home\/dev\/shop'/],
    ['/home/dev/shopping/a.ts', /is outside the repo/],
    ['src/a\0.ts', /NUL byte/],
    ['src/a\n.ts', /a line break or another control character/],
    ['src/\u001b[31mred.ts', /control character/],
    ['   ', /may not be empty/],
    ['.', /the whole repo/],
    [ROOT, /the whole repo/],
    ['!src/**', /negated glob/],
  ];
  for (const [raw, expected] of refusals) {
    assert.throws(() => reservationPath(raw, ROOT), (error: Error) => expected.test(error.message) && !error.message.includes('\n'), raw);
  }
});

test('a file is covered by a pattern that matches it or a path above it', () => {
  assert.equal(coversFile('src/auth.ts', 'src/auth.ts', sensitive), true);
  assert.equal(coversFile('src/*.ts', 'src/auth.ts', sensitive), true);
  assert.equal(coversFile('src/*.ts', 'src/deep/auth.ts', sensitive), false, '* stays in one segment');
  assert.equal(coversFile('src/**/*.ts', 'src/a/b/c/auth.ts', sensitive), true);
  assert.equal(coversFile('src/**/*.ts', 'src/auth.ts', sensitive), true, '** may be no segment at all');
  assert.equal(coversFile('src', 'src/a/b.ts', sensitive), true, 'a directory reserved by name holds its files');
  assert.equal(coversFile('src/{auth,login}.ts', 'src/login.ts', sensitive), true);
  assert.equal(coversFile('src/{auth,login}.ts', 'src/logout.ts', sensitive), false);
  assert.equal(coversFile('src/a?.ts', 'src/ab.ts', sensitive), true);
  assert.equal(coversFile('*', '.env', sensitive), true, 'dotfiles are files too');
  assert.equal(coversFile('src/auth.ts', 'src/auth.tsx', sensitive), false);
  assert.equal(coversFile('src/Auth.ts', 'src/auth.ts', sensitive), false, 'case counts where the file system keeps it');
  assert.equal(coversFile('src/Auth.ts', 'src/auth.ts', { nocase: true }), true, 'and not where it folds it');
});

test("a pattern's literal folders rule a file out before any matcher, with picomatch's answer everywhere else", () => {
  assert.equal(coversFile('src/mod/*.test.ts', 'src/other/a.test.ts', sensitive), false);
  assert.equal(coversFile('src/mod/*.test.ts', 'src/mod/a.test.ts', sensitive), true);
  assert.equal(coversFile('src/mod/*.test.ts', 'src/mod', sensitive), false, 'the folder alone is not a file of the glob');
  assert.equal(coversFile('pkg/**', 'pkg', sensitive), true, 'dir/** holds the name itself, as picomatch says');
  assert.equal(coversFile('pkg/**', 'pkg-2/a.ts', sensitive), false);
  assert.equal(coversFile('src/auth.ts', 'src/auth.ts/x', sensitive), true, 'a name held covers below it');
  assert.equal(coversFile('Src/*.ts', 'src/a.ts', sensitive), false);
  assert.equal(coversFile('Src/*.ts', 'src/a.ts', { nocase: true }), true, 'folders fold case where the file system does');
  assert.equal(coversFile('*/a.ts', 'lib/a.ts', sensitive), true, 'a glob in the first folder leaves it to the matcher');
  assert.equal(coversFile('{src,lib}/a.ts', 'lib/a.ts', sensitive), true);
});

test('overlap: literal against literal and against a glob', () => {
  assert.equal(overlaps('src/auth.ts', 'src/auth.ts'), true);
  assert.equal(overlaps('src/auth.ts', 'src/login.ts'), false);
  assert.equal(overlaps('src/auth.ts', 'src/*.ts'), true);
  assert.equal(overlaps('src/auth.ts', 'src/*.md'), false);
  assert.equal(overlaps('src/auth.ts', 'lib/*.ts'), false);
  assert.equal(overlaps('src/a/b.ts', 'src/*.ts'), false, '* does not cross a slash');
  assert.equal(overlaps('src', 'src/auth.ts'), true, 'a directory holds what is below it');
  assert.equal(overlaps('src/auth.ts', 'src/auth.ts/x'), true, 'conservative: a name held covers below it');
  assert.equal(overlaps('docs', 'src/auth.ts'), false);
});

test('overlap: glob against glob, decided conservatively', () => {
  assert.equal(overlaps('src/*.ts', 'src/*.ts'), true);
  assert.equal(overlaps('src/*.ts', 'src/a*'), true, 'src/a.ts matches both');
  assert.equal(overlaps('src/*.ts', 'src/*.md'), false, 'their fixed ends disagree');
  assert.equal(overlaps('src/a*.ts', 'src/b*.ts'), false, 'their fixed starts disagree');
  assert.equal(overlaps('src/*', 'lib/*'), false);
  assert.equal(overlaps('src/[ab].ts', 'src/[cd].ts'), true, 'when in doubt, an overlap');
  assert.equal(overlaps('*/auth.ts', 'src/*'), true);
});

test('overlap: ** at any depth', () => {
  assert.equal(overlaps('**', 'anything/at/all.ts'), true);
  assert.equal(overlaps('src/**', 'src/a/b/c/d.ts'), true);
  assert.equal(overlaps('src/**', 'lib/a.ts'), false);
  assert.equal(overlaps('**/*.ts', 'deep/down/x.ts'), true);
  assert.equal(overlaps('**/*.ts', 'deep/down/x.md'), true, 'x.md could be a directory with a .ts file below it');
  assert.equal(overlaps('**/test/*.ts', 'src/**/*.ts'), true, 'src/test/a.ts');
  assert.equal(overlaps('src/**/a.ts', 'lib/**/a.ts'), false);
  assert.equal(overlaps('a/**/z/*.ts', 'a/b/c/z/q.ts'), true);
  assert.equal(overlaps('a/**/z/*.ts', 'a/b/c/y/q.ts'), true, 'conservative: q.ts could be a directory holding z/x.ts');
  assert.equal(overlaps('a/**/z/*.ts', 'b/c/z/q.ts'), false);
});

test('overlap: brace sets are each alternative', () => {
  assert.equal(overlaps('src/{auth,login}.ts', 'src/login.ts'), true);
  assert.equal(overlaps('src/{auth,login}.ts', 'src/logout.ts'), false);
  assert.equal(overlaps('{src,lib}/a.ts', 'lib/*.ts'), true);
  assert.equal(overlaps('{src,lib}/a.ts', 'test/*.ts'), false);
  assert.equal(overlaps('src/{a,b/c}.ts', 'src/b/*'), true, 'an alternative may hold a slash');
  assert.equal(overlaps('src/{1..5000}.ts', 'lib/a.ts'), true, 'too many alternatives to weigh: an overlap');
});

test('overlap: case, where the file system folds it', () => {
  assert.equal(overlaps('src/Auth.ts', 'src/auth.ts'), false);
  assert.equal(overlaps('src/Auth.ts', 'src/auth.ts', { nocase: true }), true);
  assert.equal(overlaps('SRC/*.TS', 'src/a.ts', { nocase: true }), true);
  assert.equal(overlaps('src/*.TS', 'src/*.ts', { nocase: true }), true);
  assert.equal(overlaps('src/*.TS', 'src/*.ts'), false);
});

test('overlap: trailing slashes, as stored, hold the directory', () => {
  const dir = reservationPath('src/', ROOT);
  assert.equal(overlaps(dir, 'src/a.ts'), true);
  assert.equal(overlaps(dir, 'src'), true);
  assert.equal(overlaps(dir, 'srcs/a.ts'), false);
  assert.equal(overlaps(reservationPath('src/*/', ROOT), 'src/a/b.ts'), true);
});
