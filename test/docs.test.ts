import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { CONFIGURATION_DOC, configDocProblems, renderConfigurationDoc } from '../scripts/docs-config.ts';

it('docs/configuration.md is what the config schema generates now', () => {
  const written = readFileSync(CONFIGURATION_DOC, 'utf8');
  expect(
    written === renderConfigurationDoc(),
    'docs/configuration.md is out of date: run npm run docs:config',
  ).toBe(true);
});

it('describes every setting, and every environment variable names a setting', () => {
  expect(configDocProblems()).toEqual([]);
});
