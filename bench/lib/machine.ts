import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './paths.js';

/** Where and when the numbers were taken: absolute times only mean something beside these. */
export interface MachineInfo {
  date: string;
  node: string;
  os: string;
  cpuCount: number;
  cpuModel: string;
  memoryGiB: number;
  commit: string;
  sdk: string;
  loadAtStart: string;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

function packageVersion(name: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
      version: string;
    };
    return pkg.version;
  } catch {
    return 'unknown';
  }
}

/** The 1, 5 and 15 minute load averages, e.g. "1.61 / 2.82 / 4.57". */
export function loadAverage(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ');
}

export function machineInfo(): MachineInfo {
  const commit = git(['rev-parse', '--short', 'HEAD']) || 'unknown';
  const changed = git(['status', '--porcelain', '--untracked-files=no']).split('\n').filter(Boolean).length;
  return {
    date: new Date().toISOString(),
    node: process.version,
    os: `${process.platform} ${release()}`,
    cpuCount: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    commit: changed > 0 ? `${commit} (+${changed} changed files)` : commit,
    sdk: packageVersion('@modelcontextprotocol/server'),
    loadAtStart: loadAverage(),
  };
}
