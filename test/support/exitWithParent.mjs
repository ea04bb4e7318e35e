/**
 * Preloaded into every process a test starts (vitest.config.ts puts it in NODE_OPTIONS): a service
 * or CLI started by a test stops itself, as a signal would stop it, once the process that started it
 * is gone. A test run that is itself killed (ctrl-C twice, CI's timeout) skips the `afterAll` hooks
 * that stop its services; without this they kept running, holding ports and files, after their
 * directories were removed. A test's own signals (the crash tests' SIGKILL) still reach the child.
 */
import { isMainThread } from 'node:worker_threads';

if (isMainThread) {
  const parent = process.ppid;
  const watch = setInterval(() => {
    try {
      // Signal 0 checks that the process exists and sends nothing.
      process.kill(parent, 0);
    } catch {
      clearInterval(watch);
      process.kill(process.pid, 'SIGTERM');
    }
  }, 1_000);
  // The watch alone never keeps a process alive.
  watch.unref();
}
