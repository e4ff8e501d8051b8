import fs from 'node:fs/promises';
import path from 'node:path';
import { CliError } from '@switchboard/core';
import type { ChangelogEntry } from './publisher';

/**
 * Entries from a release file or folder. A `.json` file holds one entry `{key?, title, body}` or an array
 * of them. A folder holds one `.md` file per release, published in name order: its name (without `.md`)
 * is the entry's key, its first line (a leading `# ` dropped) the title, the rest the body.
 */
export async function readReleases(location: string): Promise<ChangelogEntry[]> {
  const stat = await fs.stat(location).catch(() => {
    throw new CliError(`${location}: no such file or folder`);
  });
  if (stat.isDirectory()) {
    // Files only: a folder named `x.md` failed the whole run with EISDIR, naming no path.
    const names = (await fs.readdir(location, { withFileTypes: true }))
      .filter((d) => d.name.endsWith('.md') && !d.isDirectory())
      .map((d) => d.name)
      .sort();
    return Promise.all(names.map(async (n) => markdownEntry(n.slice(0, -3), await readText(path.join(location, n)))));
  }
  const text = await readText(location);
  if (location.endsWith('.md')) return [markdownEntry(path.basename(location, '.md'), text)];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CliError(`${location}: not JSON (${(err as Error).message})`);
  }
  const entries = Array.isArray(parsed) ? parsed : [parsed];
  return entries.map((e, i) => {
    const entry = e as Partial<ChangelogEntry>;
    if (typeof entry?.title !== 'string' || !entry.title.trim() || typeof entry.body !== 'string')
      throw new CliError(`${location}: entry ${i + 1} needs a title and a body (strings)`);
    // A key of another type was dropped for the text's hash: an edit later published the entry again.
    if (entry.key !== undefined && typeof entry.key !== 'string')
      throw new CliError(`${location}: entry ${i + 1} has a key that is not a string`);
    return { key: typeof entry.key === 'string' ? entry.key : undefined, title: entry.title.trim(), body: entry.body };
  });
}

/** A file's text, without the byte-order mark some editors write first (it kept a `# ` in the title). */
const readText = async (file: string) => (await fs.readFile(file, 'utf8')).replace(/^\uFEFF/, '');

/** Longest key (its column's), and body in UTF-8 bytes (MySQL's TEXT: SQLite took more, MySQL failed with its SQL). */
const MAX_KEY = 191;
const MAX_BODY_BYTES = 65_535;

/** Every entry fits what the database keeps, checked before any is published. */
export function assertPublishable(entries: ChangelogEntry[]): void {
  for (const [i, entry] of entries.entries()) {
    const which = entry.key ?? `entry ${i + 1}`;
    if (entry.key !== undefined && entry.key.trim().length > MAX_KEY)
      throw new CliError(`a key has ${MAX_KEY} characters at most (entry ${i + 1})`);
    if (Buffer.byteLength(entry.body) > MAX_BODY_BYTES)
      throw new CliError(`${which}: the body is over ${MAX_BODY_BYTES} bytes (64 KiB)`);
  }
}

function markdownEntry(key: string, text: string): ChangelogEntry {
  const [first, ...rest] = text.replace(/\r\n/g, '\n').split('\n');
  const title = first.replace(/^#+\s*/, '').trim();
  if (!title) throw new CliError(`${key}.md: its first line must be the title`);
  return { key, title, body: rest.join('\n').trim() };
}
