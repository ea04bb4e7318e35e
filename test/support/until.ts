/** Polls `probe` every 100 ms until it gives a value (not undefined or false), or throws naming `what` once `deadline` (epoch ms) has passed. */
export async function until<T>(what: string, deadline: number, probe: () => Promise<T | undefined | false>): Promise<T> {
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
