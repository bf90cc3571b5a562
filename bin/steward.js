#!/usr/bin/env -S GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2 node --liftoff-only --max-semi-space-size=1 --heap-growing-percent=20 --no-maglev --no-sparkplug
// The `steward` command. Node 24 runs the TypeScript sources directly (type stripping).
// GLIBC_TUNABLES (here, in `npm start` and in the Dockerfile) has glibc's allocator return freed
// memory to the system instead of keeping up to 32 MB of it after a large buffer is freed, and
// caps its per-thread arenas at two: ~8 MB less resident memory after 70 turns (bench/).
// Other C libraries ignore it.
// The compile cache keeps the stripped and compiled modules on disk (in the system's temp
// directory, or NODE_COMPILE_CACHE): later starts skip most of that work.
// Written to run on any Node: an older one (a global install, `npm link`) gets one line
// saying which Node Steward needs, instead of a stack trace.
import module from 'node:module';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `steward needs Node.js 24 or newer; this is Node ${process.versions.node}. ` +
      'Run it as `npx steward …` in the project (npm install brought Node 24 into node_modules), ' +
      'or put Node 24 first on your PATH.\n',
  );
  process.exit(1);
}
module.enableCompileCache?.();
await import('../src/cli/main.ts');
