/** A command prints either a line for people or, with --json, one JSON object for scripts. */
export function printResult(json: boolean | undefined, object: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(object)}\n` : `${printable(human)}\n`);
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * Text for a terminal: control characters other than newline and tab written as `\xNN`. Human lines hold
 * what tenants and imported CSV files wrote (server titles, endpoints), and an escape sequence in them
 * would otherwise drive the operator's terminal (rewrite the screen, set its title, plant a link).
 */
export const printable = (text: string): string =>
  text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);

/**
 * A field of one line of a listing: a line break or tab in it written as `\n` or `\t` (the two control
 * characters `printable` leaves), so that text a tenant wrote (a server's title) cannot start a line of
 * its own that reads as another row.
 */
export const oneLine = (text: string): string => text.replace(/[\n\t]/g, (c) => (c === '\n' ? '\\n' : '\\t'));

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** A command-line id: digits without a leading zero, in the safe integer range; else null. */
export const idOf = (text: string): number | null => (/^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : null);
