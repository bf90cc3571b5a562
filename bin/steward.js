#!/usr/bin/env -S node --liftoff-only --max-semi-space-size=2 --heap-growing-percent=50
// The `steward` command. Node 24 runs the TypeScript sources directly (type stripping).
// The compile cache keeps the stripped and compiled modules on disk (in the system's temp
// directory, or NODE_COMPILE_CACHE): later starts skip most of that work.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
await import('../src/cli/main.ts');
