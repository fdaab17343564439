// What `npm test` needs beyond `npm ci`, checked before the suite starts (the
// `pretest` script): bubblewrap (`bwrap`), which the sandbox tier runs tools
// in, and `redis-server`, which the toolpool/bullmq tests start. On Linux as
// root with apt-get (CI, a fresh Debian or Ubuntu machine) a missing one is
// installed; otherwise this stops at once with the one command to run,
// rather than letting tests fail one by one after their timeouts.
//
// TOOLPOOL_TEST_AS_USER=1 behaves as a user who is not root (it never
// installs): how the suite tests the path that stops.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const NEEDED = [
  { command: 'bwrap', pkg: 'bubblewrap', why: 'the sandbox tier' },
  { command: 'redis-server', pkg: 'redis-server', why: 'the toolpool/bullmq tests' },
];

function onPath(command) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

const missing = NEEDED.filter(({ command }) => !onPath(command));
if (missing.length === 0) process.exit(0);

const packages = missing.map(({ pkg }) => pkg).join(' ');
const what = missing.map(({ command, why }) => `${command} (${why})`).join(' and ');
if (process.platform !== 'linux') {
  console.error(`npm test: ${what} not found; they exist on Linux only, and the tests that need them skip elsewhere.`);
  process.exit(0);
}

const root = process.getuid?.() === 0 && process.env.TOOLPOOL_TEST_AS_USER !== '1';
if (root && onPath('apt-get')) {
  console.error(`npm test: installing ${packages} (needed: ${what})`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const steps = [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...missing.map(({ pkg }) => pkg)],
  ];
  for (const args of steps) {
    const ran = spawnSync('apt-get', args, { stdio: ['ignore', 'inherit', 'inherit'], env });
    if (ran.status !== 0) {
      console.error(
        `npm test: "apt-get ${args.join(' ')}" failed; install them yourself (apt-get install -y ${packages}) and run npm test again.`,
      );
      process.exit(1);
    }
  }
  const still = missing.filter(({ command }) => !onPath(command));
  if (still.length === 0) process.exit(0);
  console.error(
    `npm test: ${still.map(({ command }) => command).join(' and ')} still not found after installing ${packages}.`,
  );
  process.exit(1);
}

const command = `${root ? '' : 'sudo '}apt-get install -y ${packages}`;
console.error(
  `npm test needs ${what}, which ${missing.length === 1 ? 'is' : 'are'} not installed. Install with:\n\n  ${command}\n\n(or your system's packages of the same names), then run npm test again.`,
);
process.exit(1);
