import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { BreakingChange } from './findings.js';

const cli = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

interface Verdict {
  ruleId: string;
  impact: 'major' | 'minor' | 'patch';
  message: string;
  location?: { pointer?: string };
}

/**
 * The changes `redocly diff` (experimental in @redocly/cli 2.x) rates as a major bump, with the rules of
 * `diff-recommended` that redocly.yaml extends. Without that config it reports "No diff rules are on" and passes.
 */
export function redoclyBreakingChanges(basePath: string, headPath: string, config: string): BreakingChange[] {
  const run = spawnSync(
    process.execPath,
    [cli, 'diff', basePath, headPath, '--format', 'json', '--fail-on', 'none', '--config', config],
    {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      // No update check or usage report: CI runs offline, and each would wait for a network time-out.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    },
  );
  const start = run.stdout.indexOf('{');
  if (run.status !== 0 || start < 0)
    throw new Error(`redocly diff ${basePath} ${headPath} failed (exit ${run.status}):\n${run.stderr}`);
  const report = JSON.parse(run.stdout.slice(start)) as { changes: Array<{ path: string; verdicts: Verdict[] }> };
  return report.changes.flatMap((change) =>
    change.verdicts
      .filter((verdict) => verdict.impact === 'major')
      .map((verdict) => ({
        rule: verdict.ruleId,
        pointer: verdict.location?.pointer ?? change.path,
        message: verdict.message,
      })),
  );
}
