import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import 'uplot/dist/uPlot.min.css';
import { currentRole, signIn, signOut, type Role } from './api.js';
import { AdminPage, AuditLog } from './pages/Admin.js';
import { PipelinePage } from './pages/Pipeline.js';
import { SourcesPage } from './pages/Sources.js';
import { UserDetailPage } from './pages/UserDetail.js';
import { UsersPage } from './pages/Users.js';
import { WebhooksPage } from './pages/Webhooks.js';
import './styles.css';

function useHash(): string[] {
  const read = () => location.hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  const [parts, setParts] = useState(read);
  useEffect(() => {
    const on = () => setParts(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return parts;
}

function SignIn({ onSignedIn }: { onSignedIn: (role: Role) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(key));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1>Wellstream console</h1>
      <form onSubmit={submit} aria-describedby="signin-help">
        <label for="key">API key</label>
        <input id="key" name="key" type="password" autoComplete="off" spellcheck={false} required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <p id="signin-help" class="hint">
          A tenant API key (<code>svc_sk_…</code>) opens the tenant's users, sources, webhooks and pipeline; the instance admin key (<code>svc_ak_…</code>) opens tenants, keys and the audit log. The key stays in this page's memory only: reloading the page signs out.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

const TENANT_NAV = [
  ['users', 'Users'],
  ['sources', 'Sources'],
  ['webhooks', 'Webhooks'],
  ['pipeline', 'Pipeline'],
  ['audit', 'Audit log'],
] as const;
const ADMIN_NAV = [['admin', 'Admin']] as const;
/** Sections about one user (#/section/<user id>): moving between them keeps the user. */
const PER_USER = ['users', 'sources', 'pipeline'];

function App() {
  const [role, setRole] = useState<Role | null>(currentRole());
  const parts = useHash();
  // The user last shown on a per-user page: Sources and Pipeline open on that user until another is chosen.
  const [lastUser, setLastUser] = useState<string | null>(null);
  const shownUser = PER_USER.includes(parts[0] ?? '') && parts[1] ? parts[1] : null;
  useEffect(() => {
    if (shownUser) setLastUser(shownUser);
  }, [shownUser]);
  const carried = shownUser ?? lastUser;
  // A link into the console (the demo start prints one) survives the sign-in when the key's role may open it.
  const signedIn = (r: Role) => {
    setRole(r);
    const fits = r === 'admin' ? parts[0] === 'admin' : TENANT_NAV.some(([id]) => id === parts[0]);
    if (!fits) location.hash = r === 'admin' ? '#/admin' : '#/users';
  };
  if (!role) return <SignIn onSignedIn={signedIn} />;
  const nav = role === 'admin' ? ADMIN_NAV : TENANT_NAV;
  const section = parts[0] ?? nav[0][0];
  let page;
  if (role === 'admin') page = <AdminPage tenantId={parts[1]} />;
  else if (section === 'users' && parts[1]) page = <UserDetailPage key={parts[1]} userId={parts[1]} />;
  else if (section === 'sources') page = <SourcesPage userId={parts[1]} />;
  else if (section === 'webhooks') page = <WebhooksPage webhookId={parts[1]} />;
  else if (section === 'pipeline') page = <PipelinePage userId={parts[1]} />;
  else if (section === 'audit')
    page = (
      <section aria-labelledby="tenant-audit-h">
        <h1 id="tenant-audit-h">Audit log</h1>
        <AuditLog path="/v1/audit-log" title="Calls that changed something, newest first" />
      </section>
    );
  else page = <UsersPage />;
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Wellstream</span>
        <nav aria-label="Sections">
          <ul>
            {nav.map(([id, label]) => (
              <li key={id}>
                <a href={carried && (id === 'sources' || id === 'pipeline') ? `#/${id}/${encodeURIComponent(carried)}` : `#/${id}`} aria-current={section === id ? 'page' : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <span class="who">{role === 'admin' ? 'instance admin' : 'tenant key'}</span>
        <button type="button" class="secondary" onClick={() => { signOut(); setRole(null); setLastUser(null); location.hash = ''; }}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
