#!/usr/bin/env node
// The compiled program (npm ci runs `prepare`, which builds dist/).
import '../dist/cli.js';
