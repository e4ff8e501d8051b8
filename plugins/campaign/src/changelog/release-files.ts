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
    const names = (await fs.readdir(location)).filter((n) => n.endsWith('.md')).sort();
    return Promise.all(
      names.map(async (n) => markdownEntry(n.slice(0, -3), await fs.readFile(path.join(location, n), 'utf8'))),
    );
  }
  const text = await fs.readFile(location, 'utf8');
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
    return { key: typeof entry.key === 'string' ? entry.key : undefined, title: entry.title.trim(), body: entry.body };
  });
}

function markdownEntry(key: string, text: string): ChangelogEntry {
  const [first, ...rest] = text.replace(/\r\n/g, '\n').split('\n');
  const title = first.replace(/^#+\s*/, '').trim();
  if (!title) throw new CliError(`${key}.md: its first line must be the title`);
  return { key, title, body: rest.join('\n').trim() };
}
