import { allPages, enc } from '../api.js';
import type { User } from '../types.js';
import { useAsync } from '../util.js';

/** Chooses the user a per-user page shows; the choice is the page's address (#/section/<id>). */
export function UserPicker({ section, userId }: { section: string; userId: string | undefined }) {
  const users = useAsync(() => allPages<User>('/v1/users', { limit: 1000 }), []);
  return (
    <label class="toolbar">
      User{' '}
      <select aria-label="User" value={userId ?? ''} onChange={(e) => (location.hash = `#/${section}/${enc(e.currentTarget.value)}`)}>
        <option value="">— choose a user —</option>
        {(users.data ?? []).map((u) => (
          <option key={u.id} value={u.id}>
            {u.external_ref ?? u.id}
          </option>
        ))}
      </select>
    </label>
  );
}
