import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Semver from 'semver';
import type { Finding, Severity } from './finding.ts';

export type Advisory = {
  package: string;
  id: string;
  severity: Severity;
  /** Ranges joined by `||`; each range is space-separated comparators (`>=7.0.0 <7.0.5`). */
  vulnerable: string;
  fixed: string;
  title: string;
};

export type AdvisoryList = { about: string; updated: string; advisories: Advisory[] };

const BUNDLED = new URL('./advisories.json', import.meta.url);

export function bundledAdvisories(): AdvisoryList {
  return JSON.parse(readFileSync(BUNDLED, 'utf8')) as AdvisoryList;
}

/**
 * Installed packages (name → versions) from npm's own record of `node_modules`
 * (`node_modules/.package-lock.json`), else the project's package-lock.json. Null when neither
 * exists (a copy of Steward installed some other way).
 */
export function installedPackages(installDir: string): Map<string, Set<string>> | null {
  for (const file of ['node_modules/.package-lock.json', 'package-lock.json']) {
    let lock: { packages?: Record<string, { version?: string; name?: string }> };
    try {
      lock = JSON.parse(readFileSync(path.join(installDir, file), 'utf8'));
    } catch {
      continue;
    }
    const installed = new Map<string, Set<string>>();
    for (const [location, entry] of Object.entries(lock.packages ?? {})) {
      const at = location.lastIndexOf('node_modules/');
      if (at === -1 || !entry.version) continue;
      const name = entry.name ?? location.slice(at + 'node_modules/'.length);
      installed.set(name, (installed.get(name) ?? new Set()).add(entry.version));
    }
    return installed;
  }
  return null;
}

/** One finding per installed package version that a bundled advisory covers. */
export function dependencyFindings(installDir: string, list: AdvisoryList = bundledAdvisories()): Finding[] {
  const installed = installedPackages(installDir);
  if (!installed) {
    return [
      {
        id: 'dependency-inventory-missing',
        severity: 'low',
        message: `No package-lock.json or node_modules/.package-lock.json under ${installDir}, so installed dependencies could not be checked against known advisories.`,
        fix: 'Install Steward with npm ci from its package-lock.json.',
      },
    ];
  }
  const findings: Finding[] = [];
  for (const advisory of list.advisories) {
    for (const version of installed.get(advisory.package) ?? []) {
      if (!satisfies(version, advisory.vulnerable)) continue;
      findings.push({
        id: 'dependency-advisory',
        severity: advisory.severity,
        message: `${advisory.package} ${version} is affected by ${advisory.id}: ${advisory.title}.`,
        fix: `Upgrade ${advisory.package} to ${advisory.fixed === 'none' ? 'a replacement (no fixed version)' : advisory.fixed} or later (npm update / a newer Steward release), then run npm ci.`,
      });
    }
  }
  return findings;
}

/**
 * `version` is inside `range` (`<1.2.3 || >=2.0.0 <2.1.0`), by semver; a prerelease of an
 * affected version is affected too. Unparsable versions never match.
 */
export function satisfies(version: string, range: string): boolean {
  const semver = semverOnce();
  return semver.valid(version) !== null && semver.satisfies(version, range, { includePrerelease: true });
}

let semverLib: typeof Semver | undefined;

/** semver (47 modules), loaded by the first audit instead of by every process that imports this folder. */
function semverOnce(): typeof Semver {
  semverLib ??= createRequire(import.meta.url)('semver') as typeof Semver;
  return semverLib;
}
