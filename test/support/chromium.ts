import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's Chromium, which the browser tests drive through playwright-core. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Makes sure Chromium is installed: when it is missing and this runs as root, installs Debian's
 * package (`apt-get install -y chromium`); otherwise explains how. Returns the executable's path.
 */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}. Install it with \`sudo apt-get install -y chromium\` (or set CHROMIUM_PATH).`,
    );
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], {
      env,
      stdio: 'pipe',
      timeout: 15 * 60_000,
    });
  try {
    install();
  } catch {
    // The package lists may be missing or stale: refresh them once and try again.
    execFileSync('apt-get', ['update'], { env, stdio: 'pipe', timeout: 10 * 60_000 });
    install();
  }
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium, but ${CHROMIUM} is still missing.`);
  return CHROMIUM;
}

/** Launches Debian's Chromium (installed first when missing) headless, as the browser tests drive it. */
export async function launchChromium(options: { handleSIGTERM?: boolean } = {}): Promise<Browser> {
  const executablePath = ensureChromium();
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    ...options,
  });
}

let shared: Promise<Browser> | undefined;
let exitsOnSigterm = false;

/**
 * One Chromium for every browser test file of this process (vitest runs a worker's files in one
 * process: `isolate: false`), launched on first use: a launch costs seconds of a loaded machine.
 * A file opens its own contexts and closes them; it must not close the browser. The browser goes
 * with the process: vitest stops a worker with SIGTERM, which then exits the process, and
 * playwright kills Chromium and removes its profile on exit.
 */
export function sharedChromium(): Promise<Browser> {
  if (!exitsOnSigterm) {
    // Playwright's own SIGTERM handler would close the browser but keep the worker running until
    // vitest kills it outright half a second later, Chromium's profile left behind.
    exitsOnSigterm = true;
    process.once('SIGTERM', () => process.exit(143));
  }
  shared ??= launchChromium({ handleSIGTERM: false }).then(
    (browser) => {
      browser.on('disconnected', () => {
        shared = undefined;
      });
      return browser;
    },
    (error: unknown) => {
      shared = undefined;
      throw error;
    },
  );
  return shared;
}
