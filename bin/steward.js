#!/usr/bin/env -S node --liftoff-only
// The `steward` command. Node 24 runs the TypeScript sources directly (type stripping).
import '../src/cli/main.ts';
