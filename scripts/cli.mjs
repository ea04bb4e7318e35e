/**
 * `npm run cli`: as `npm start` (scripts/start.mjs), the CLI's compiled entry after compiling what
 * changed, instead of the sources through tsx, whose start-up every command paid (issue 36 point 6).
 */
import { runCompiled } from './buildService.mjs';

await runCompiled('src/cli/main.js');
