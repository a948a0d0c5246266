import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The README stays a page a user reads (at most 300 lines), and every relative link in it and in
 * the documents under docs/ and ops/ points at a file that exists, and at a heading that exists
 * when it names one: a page moved or a heading renamed breaks the test, not the reader's click.
 */

const root = resolve(import.meta.dirname, '..');
const README_MOST_LINES = 300;

const documents = [
  'README.md',
  'ops/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Markdown without its fenced code blocks, where a `[x](y)` is code, not a link. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** Relative link targets: `[text](target)` and `![alt](target)`, without web addresses or bare anchors. */
function linksOf(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/i.test(target));
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

const anchorsOf = (text: string) => new Set([...prose(text).matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => anchorOf(match[1]!)));

describe('the documentation', () => {
  it(`keeps the README to at most ${README_MOST_LINES} lines`, () => {
    const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n').length - 1;
    expect(lines).toBeLessThanOrEqual(README_MOST_LINES);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const document of documents) {
      const text = readFileSync(join(root, document), 'utf8');
      for (const link of linksOf(text)) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? join(root, document) : resolve(dirname(join(root, document)), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${document}: ${link} (no ${relative(root, target)})`);
          continue;
        }
        if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${document}: ${link} (no such heading)`);
      }
    }
    expect(broken).toStrictEqual([]);
  });
});
