import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding openapi.json: the repository under tsx, the image root when compiled into dist/. */
function findProjectRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'openapi.json'))) return dir;
  }
  throw new Error(`openapi.json not found above ${from}`);
}

const projectRoot = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

export function readProjectFile(name: string): string {
  return readFileSync(join(projectRoot, name), 'utf8');
}

export const serviceVersion: string = JSON.parse(readProjectFile('package.json')).version;
