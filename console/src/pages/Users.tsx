import { useState } from 'preact/hooks';
import { allPages, enc } from '../api.js';
import { Loadable } from '../components/Status.js';
import { Time } from '../components/Time.js';
import type { User } from '../types.js';
import { useAsync } from '../util.js';
import { ScrollBox } from '../components/ScrollBox.js';
import { plural } from '../format.js';

/**
 * The tenant's users with a search by external_ref. The list route has no filter, so the page
 * reads every page once and filters in the browser (a substring, case-insensitive).
 */
export function UsersPage() {
  const users = useAsync(() => allPages<User>('/v1/users', { limit: 1000 }), []);
  const [q, setQ] = useState('');
  return (
    <section aria-labelledby="users-h">
      <h1 id="users-h">Users</h1>
      <div class="toolbar">
        <label for="user-search">Search by external_ref</label>
        <input id="user-search" type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} placeholder="e.g. demo-user" />
      </div>
      <Loadable state={users} label="users">
        {(all) => {
          const needle = q.trim().toLowerCase();
          const shown = needle ? all.filter((u) => (u.external_ref ?? '').toLowerCase().includes(needle) || u.id.startsWith(needle)) : all;
          return (
            <>
              <p role="status" class="muted">
                {shown.length} of {plural(all.length, 'user')}
              </p>
              <ScrollBox>
                <table data-testid="users-table">
                  <caption class="sr-only">Users of the tenant</caption>
                  <thead>
                    <tr>
                      <th scope="col">external_ref</th>
                      <th scope="col">id</th>
                      <th scope="col">status</th>
                      <th scope="col">created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {shown.map((u) => (
                      <tr key={u.id} data-user-id={u.id}>
                        <td>
                          <a href={`#/users/${enc(u.id)}`}>{u.external_ref ?? '(none)'}</a>
                        </td>
                        <td class="mono">{u.id}</td>
                        <td>{u.status}</td>
                        <td><Time at={u.created_at} /></td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </ScrollBox>
            </>
          );
        }}
      </Loadable>
    </section>
  );
}
