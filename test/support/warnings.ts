import { afterEach, vi } from 'vitest';

/** The warnings emitted from now until the test ends, as text; nothing is printed meanwhile. */
export function captureWarnings(): string[] {
  const warnings: string[] = [];
  vi.spyOn(process, 'emitWarning').mockImplementation((warning: string | Error) => void warnings.push(String(warning)));
  return warnings;
}

/** Call once per test file that captures warnings: the spy ends with each test. */
export function restoreWarningsAfterEach(): void {
  afterEach(() => {
    vi.restoreAllMocks();
  });
}
