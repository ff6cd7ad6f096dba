#!/usr/bin/env node
// Bump the "version" in ./package.json: node bump-version.mjs [patch|minor|major]
import { readFileSync, writeFileSync, renameSync } from 'node:fs';

function bumpSemverTriple(version, part) {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!match) throw new Error(`not a plain x.y.z version: ${version}`);
  let [major, minor, patch] = match.slice(1).map(Number);
  if (part === 'major') { major += 1; minor = 0; patch = 0; }
  else if (part === 'minor') { minor += 1; patch = 0; }
  else if (part === 'patch') { patch += 1; }
  else throw new Error(`unknown part ${part}: use patch, minor or major`);
  return `${major}.${minor}.${patch}`;
}

function writePackageManifestAtomically(path, manifest) {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(manifest, null, 2) + '\n');
  renameSync(tmp, path);
}

const part = process.argv[2] ?? 'patch';
const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
manifest.version = bumpSemverTriple(manifest.version, part);
writePackageManifestAtomically('package.json', manifest);
console.log(manifest.version);
