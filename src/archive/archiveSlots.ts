/**
 * The archives this process streams at once (issue 20): one per user, so a user cannot occupy
 * every slot, and at most `limit` in all, so archives cannot crowd out the rest of the API. A
 * slot is held from the request until its response closes (sent, failed or abandoned).
 */
export class ArchiveSlots {
  private readonly users = new Set<string>();

  constructor(readonly limit: number) {}

  /** Takes the user's slot, or answers why it cannot. */
  take(userId: string): 'taken' | 'user_busy' | 'full' {
    if (this.users.has(userId)) return 'user_busy';
    if (this.users.size >= this.limit) return 'full';
    this.users.add(userId);
    return 'taken';
  }

  release(userId: string): void {
    this.users.delete(userId);
  }

  get inFlight(): number {
    return this.users.size;
  }
}
