#!/usr/bin/env node
// The npm launcher of micro-rag-mcp: runs the binary of the platform package
// (an exact-pinned optional dependency) with this process's stdin, stdout
// and stderr, passes SIGTERM, SIGINT and SIGHUP on (and SIGTERM when its
// parent dies), and exits as it did.
// Node cannot exec, so it waits on a child; stdio is inherited, so no MCP
// byte passes through JavaScript.
'use strict';

const path = require('path');
const { spawn } = require('child_process');
const pkg = require('../package.json');

const [platformName, platformVersion] = Object.entries(pkg.optionalDependencies || {})[0] || [];

// libc names the C library of a Linux system: glibc's version, 'musl', or ''
// elsewhere. Node reports glibc's version in its diagnostic report.
function libc() {
  if (process.platform !== 'linux') return '';
  try {
    const v = process.report.getReport().header.glibcVersionRuntime;
    if (v) return 'glibc ' + v;
  } catch (_) { /* no report: guess from the loader below */ }
  try {
    if (require('fs').readdirSync('/lib').some((f) => f.startsWith('ld-musl-'))) return 'musl';
  } catch (_) { /* no /lib */ }
  return '';
}

// missingMessage says why the binary is not there and what to do, for a
// system described by sys ({platform, arch, libc}).
function missingMessage(sys) {
  const want = `Linux x86_64 with glibc ${pkg.glibcFloor} or newer`;
  const here = [sys.platform, sys.arch, sys.libc].filter(Boolean).join(' ');
  const lines = [`micro-rag-mcp: the binary package ${platformName}@${platformVersion} is not installed.`];
  if (sys.platform !== 'linux' || sys.arch !== 'x64') {
    lines.push(`It exists only for ${want}; this system is ${here}, so npm skipped it.`,
      'Build micro-rag-mcp from source on this system (see the README), or run it on a Linux x86_64 machine.');
  } else if (sys.libc === 'musl') {
    lines.push(`It needs glibc (${want}); this system uses musl libc (Alpine, for one), so npm skipped it.`,
      'Use a glibc-based distribution or image (Debian, Ubuntu, Fedora, RHEL 9), or build from source.');
  } else {
    lines.push(`This system (${here}) is supported, so npm left the package out: it was installed with`,
      '--omit=optional (or --no-optional, omit=optional in .npmrc, NODE_ENV=production with some tools),',
      'or the download failed and npm skipped it silently, as it does for optional dependencies.',
      `Install it beside this package: npm install ${platformName}@${platformVersion}`);
  }
  return lines.join('\n');
}

function binaryPath() {
  try {
    return path.join(path.dirname(require.resolve(`${platformName}/package.json`)), 'bin', 'micro-rag-mcp');
  } catch (_) {
    return '';
  }
}

function run() {
  const exe = binaryPath();
  if (!exe) {
    process.stderr.write(missingMessage({ platform: process.platform, arch: process.arch, libc: libc() }) + '\n');
    return process.exit(127);
  }
  const child = spawn(exe, process.argv.slice(2), { stdio: 'inherit' });
  const forward = ['SIGTERM', 'SIGINT', 'SIGHUP'];
  for (const sig of forward) {
    process.on(sig, () => { if (child.exitCode === null) child.kill(sig); });
  }
  // npx runs this file through `sh -c`, and sh dies of the SIGTERM npm
  // passes it without passing it on: a new parent means the one that
  // started us is gone, so stop the server as if signalled.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid !== parent && child.exitCode === null) {
      clearInterval(watch);
      child.kill('SIGTERM');
    }
  }, 500);
  child.on('error', (err) => {
    process.stderr.write(`micro-rag-mcp: cannot run ${exe}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => {
    clearInterval(watch);
    if (signal) {
      // Die of the same signal, so our parent sees what happened.
      for (const sig of forward) process.removeAllListeners(sig);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code);
  });
}

if (require.main === module) {
  run();
} else {
  module.exports = { missingMessage };
}
