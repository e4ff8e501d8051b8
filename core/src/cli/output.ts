/** A command prints either a line for people or, with --json, one JSON object for scripts. */
export function printResult(json: boolean | undefined, object: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(object)}\n` : `${human}\n`);
}

export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** A command-line id: digits without a leading zero, in the safe integer range; else null. */
export const idOf = (text: string): number | null => (/^[1-9][0-9]{0,15}$/.test(text) ? Number(text) : null);
