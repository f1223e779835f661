import { runAdmin } from '../src/admin/cli.js';

process.exitCode = await runAdmin(process.argv.slice(2));
