import { AppError, CliError } from '@switchboard/core';

/** A failure whose message is for the person at the command line as it is (an import file that cannot be read). */
export class InputError extends Error {}

/** The spec's operations fail as the endpoints do: a clear message and exit code 1. */
export const asCliError = (err: unknown): never => {
  if (err instanceof AppError || err instanceof InputError) throw new CliError(err.message);
  throw err;
};
