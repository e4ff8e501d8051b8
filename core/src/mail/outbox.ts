import fs from 'node:fs/promises';
import path from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../private-files';

/** Mails the outbox keeps by default (OUTBOX_KEEP): ~100 MB of 10 KB mails; older ones are removed. */
export const DEFAULT_OUTBOX_KEEP = 10_000;

/**
 * The outbox folder of the embedded default (no SMTP_URL): each mail an .eml file named by the time it was
 * written, so that names sort as the mails were written, in every process writing there. It keeps the newest
 * `keep` mails (0: all): a send to a large list on a small machine filled the disk (a 100,000-recipient send
 * wrote ~1 GB). The folder is read every `keep / 10` mails (at most 100), and on the first, so it holds at
 * most that many more between two reads.
 */
export function outbox(dir: string, keep: number) {
  const every = Math.max(1, Math.min(100, Math.ceil(keep / 10)));
  let written = 0;
  let pruning: Promise<void> | null = null;

  async function prune(): Promise<void> {
    const mails = (await fs.readdir(dir)).filter((name) => name.endsWith('.eml') && !name.startsWith('.')).sort();
    for (const name of mails.slice(0, Math.max(0, mails.length - keep)))
      // Another process pruning the same folder may have removed it first.
      await fs.unlink(path.join(dir, name)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
  }

  return async function write(messageId: string, bytes: Buffer): Promise<void> {
    await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    // The time, then this process's count of mails (mails of one millisecond sorted by their random ids
    // otherwise: the newest could be pruned before an older one).
    const count = written++;
    const order = String(count % 1_000_000).padStart(6, '0');
    const file = `${new Date().toISOString().replace(/[:.]/g, '-')}-${order}-${messageId.replace(/[^A-Za-z0-9@.-]/g, '')}.eml`;
    // Written whole under another name, then renamed: whoever reads the folder never sees half a mail.
    await writeWhole(path.join(dir, `.${file}.partial`), path.join(dir, file), bytes);
    // The mail is written: pruning failing (a folder gone unreadable) must not read as the mail failing,
    // or it would be written again; the next prune tries again.
    if (keep > 0 && count % every === 0 && !pruning)
      await (pruning = prune()
        .catch(() => undefined)
        .finally(() => (pruning = null)));
  };
}

/**
 * `bytes` written to `partial`, then renamed to `file`. A write or rename that fails (a full disk leaves
 * half a file) removes the part, or every failed try would keep its own.
 */
export async function writeWhole(partial: string, file: string, bytes: Buffer): Promise<void> {
  try {
    await fs.writeFile(partial, bytes, { mode: PRIVATE_FILE_MODE });
    await fs.rename(partial, file);
  } catch (err) {
    await fs.rm(partial, { force: true }).catch(() => undefined);
    throw err;
  }
}
