/** An error the CLI reports as one line, without a stack trace, and exits with `exitCode`. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** The error behind it, whose stack TOOLPOOL_DEBUG=1 prints. */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'CliError';
  }
}

/** Exit code 2: the command line is wrong (unknown flag, missing argument, unknown provider). */
export function usageError(command: string, message: string): CliError {
  return new CliError(`${message}\nRun "toolpool ${command} --help" for usage.`, 2);
}

/** Exit code 1: the command was fine but could not be carried out (missing key, server down, bad tool). */
export function runError(message: string, cause?: unknown): CliError {
  return new CliError(message, 1, cause);
}

/** Makes any error message fit one line: tool loaders and compilers put details on later lines. */
export function oneLineMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s*\n\s*/g, ' ').trim();
}
