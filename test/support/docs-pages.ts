/**
 * The user-facing documentation: README.md and every page of docs/, read
 * from the repository, and the fenced code blocks in them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const docsRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface Page {
  /** The path from the repository root: `README.md`, `docs/tools.md`. */
  path: string;
  text: string;
}

export function docPages(): Page[] {
  const docs = readdirSync(`${docsRoot}docs`)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].map((path) => ({ path, text: readFileSync(`${docsRoot}${path}`, 'utf8') }));
}

/** README.md and the docs pages as one text: what the examples tests look for a quoted example in. */
export function allDocsText(): string {
  return docPages()
    .map((page) => page.text)
    .join('\n');
}

export interface CodeBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's language (`ts`, `sh`, ...), '' when it names none. */
  lang: string;
  /** What follows the language on the fence line (`nocheck: why`). */
  info: string;
  /** The block's lines, unindented as far as its fence was indented, ending with a newline. */
  code: string;
}

/** Every fenced block of a page, also those indented inside a list item. */
export function codeBlocks(page: Page): CodeBlock[] {
  const lines = page.text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !/^\s*```\s*$/.test(lines[j]!)) body.push(lines[j++]!.slice(indent));
    if (j === lines.length) throw new Error(`${page.path}:${i + 1}: a code block that is never closed`);
    blocks.push({
      page: page.path,
      line: i + 1,
      lang: open[2]!,
      info: open[3]!.trim(),
      code: body.map((l) => `${l}\n`).join(''),
    });
    i = j;
  }
  return blocks;
}

/** The page's text without its code blocks (each replaced by an empty line), for checks on prose. */
export function prose(page: Page): string {
  return page.text.replace(/^\s*```[^\n]*\n[\s\S]*?^\s*```\s*$/gm, '');
}
