#!/usr/bin/env node
// The compiled CLI (npm run build). During development: npx tsx src/cli/main.ts
import '../dist/cli/main.js';
