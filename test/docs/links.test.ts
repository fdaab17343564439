/**
 * The docs speak to someone who installed the package: no page names a file
 * an install lacks (src/, test/, bench/, BENCHMARKS.md, .ci/run) except
 * through the repository's URL, every relative link between pages resolves
 * (anchors included), each docs page opens with code, and the README stays
 * short.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, test } from 'vitest';
import { docPages, docsRoot, prose, type Page } from '../support/docs-pages.ts';

const pages = docPages();
const byPath = new Map(pages.map((page) => [page.path, page]));

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(page: Page): Set<string> {
  return new Set([...prose(page).matchAll(/^#{1,6}\s+(.+)$/gm)].map(([, heading]) => slug(heading!)));
}

/** `[label](target)` links outside code blocks. */
function links(page: Page): string[] {
  return [...prose(page).matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)].map(([, target]) => target!);
}

/** Names of files an installed package does not have. */
const ABSENT = /(?:^|[\s`(["'])(?:\.\/)?(?:src|test|bench)\/|BENCHMARKS\.md|\.ci\/run/;

describe('the docs pages', () => {
  test('README.md has at most 250 lines; docs/ has at least 10 pages', () => {
    expect(byPath.get('README.md')!.text.split('\n').length).toBeLessThanOrEqual(250);
    expect(pages.filter((page) => page.path.startsWith('docs/')).length).toBeGreaterThanOrEqual(10);
  });

  test('each docs page opens with a code block, right after its title', () => {
    const late = pages
      .filter((page) => page.path.startsWith('docs/') && !/^# .+\n\n```/.test(page.text))
      .map((page) => page.path);
    expect(late).toEqual([]);
  });

  test('every relative link resolves to a page (and a heading on it), never to a file an install lacks', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const target of links(page)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const path = file ? normalize(join(dirname(page.path), file)) : page.path;
        const to = byPath.get(path);
        if (!to)
          broken.push(
            `${page.path}: ${target} (${existsSync(join(docsRoot, path)) ? 'not a docs page: an install may lack it' : 'no such file'})`,
          );
        else if (anchor && !anchors(to).has(anchor)) broken.push(`${page.path}: ${target} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('no page names a file an install lacks, outside a link to the repository', () => {
    // architecture.md is about the repository's source and says so; its clone commands are labelled.
    const named = pages
      .filter((page) => page.path !== 'docs/architecture.md')
      .flatMap((page) =>
        prose(page)
          .replace(/\[[^\]]*\]\(https:\/\/github\.com\/toolpool\/toolpool\/[^)]*\)/g, '')
          .split('\n')
          .filter((line) => ABSENT.test(line))
          .map((line) => `${page.path}: ${line.trim()}`),
      );
    expect(named).toEqual([]);
  });

  test('the check above sees a file an install lacks', () => {
    expect(ABSENT.test('see `test/hostile.test.ts`')).toBe(true);
    expect(ABSENT.test('([BENCHMARKS.md](BENCHMARKS.md))')).toBe(true);
    expect(ABSENT.test('`node_modules/toolpool/dist/tools/*.js`')).toBe(false);
  });

  test('no page names a path of the machine it was written on', () => {
    const own = [docsRoot.replace(/\/$/, ''), homedir()].filter((path) => path.length > 1);
    const found = pages.filter((page) => own.some((path) => page.text.includes(path))).map((page) => page.path);
    expect(found).toEqual([]);
  });
});
