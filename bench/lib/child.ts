import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { childEnvironment } from './toolpool.ts';

/**
 * Runs one of bench/children/*.ts in a fresh Node process (through tsx, as
 * `npm run bench` runs) and returns the JSON it prints on its last line.
 */
export async function runChild<T>(script: string, args: string[], nodeFlags: string[] = []): Promise<T> {
  const file = fileURLToPath(new URL(`../children/${script}`, import.meta.url));
  const env = await childEnvironment();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...nodeFlags, '--import', 'tsx', file, ...args],
      { timeout: 60_000, env },
      (error, stdout, stderr) => {
        if (error)
          return reject(new Error(`bench child ${script} ${args.join(' ')} failed: ${error.message}\n${stderr}`));
        const last = stdout.trim().split('\n').pop() ?? '';
        try {
          resolve(JSON.parse(last) as T);
        } catch {
          reject(new Error(`bench child ${script} printed no JSON: ${stdout}\n${stderr}`));
        }
      },
    );
  });
}
