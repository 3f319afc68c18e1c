#!/usr/bin/env -S node --max-semi-space-size=8 --heap-growing-percent=50
// --max-semi-space-size=8: a young generation of 16 MB instead of 32 keeps the server ~16 MB
// smaller at rest and frees upload buffers sooner, at no measured cost to ingest (docs/benchmarks.md).
// --heap-growing-percent=50: after each full GC old space may grow to 1.5× what lives before the
// next; V8's own factor let the main thread's heap reach 83–114 MB under bench:ingest with ~38 MB
// live, 61–62 MB with this, at no measured CPU cost (docs/benchmarks.md, session 17).
// The compiled CLI (npm run build). During development: npx tsx src/cli/main.ts
import '../dist/cli/main.js';
