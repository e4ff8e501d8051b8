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
