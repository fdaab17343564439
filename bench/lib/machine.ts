import { packageVersion } from './package-version.ts';
import { piPackage } from './pi.ts';

export { packageVersion };
import { availableParallelism, cpus, loadavg, platform, release, totalmem } from 'node:os';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGb: number;
  os: string;
  node: string;
  date: string;
  loadAverage: number[];
  versions: Record<string, string>;
}

export function machineInfo(): MachineInfo {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${platform()} ${release()}`,
    node: process.version,
    date: new Date().toISOString(),
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    versions: Object.fromEntries(
      ['piscina', 'tinybench', piPackage(), 'ajv', 'esbuild'].map((name) => [name, packageVersion(name)]),
    ),
  };
}
