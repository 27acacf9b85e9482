// The web console (docs/console.md): sign-in, navigation by the address's hash, one live-progress
// stream for every page, and the pages themselves in pages/.
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { followEvents, onKeyRefused, storedKey, storeKey } from './api.js';
import { Live } from './live.js';
import { Activity } from './pages/activity.js';
import { Audit } from './pages/audit.js';
import { Browser } from './pages/browser.js';
import { Alert, KeyScopes, message } from './pages/common.js';
import { Keys } from './pages/keys.js';
import { Locations } from './pages/locations.js';
import { ScheduleDetail, Schedules } from './pages/schedules.js';
import { Sends } from './pages/sends.js';
import { Shares } from './pages/shares.js';
import { SignIn } from './pages/signin.js';
import { Sync } from './pages/sync.js';
import { Webhooks } from './pages/webhooks.js';
import { type KeyInfo, readKey, setKeyInfo } from './scopes.js';

const PAGES = [
  ['locations', 'Locations'],
  ['activity', 'Transfers and jobs'],
  ['sync', 'Sync'],
  ['schedules', 'Schedules'],
  ['shares', 'Shares'],
  ['sends', 'Sends'],
  ['webhooks', 'Webhooks'],
  ['keys', 'API keys'],
  ['audit', 'Audit log'],
] as const;

function useHash(): string {
  const [hash, setHash] = useState(location.hash.slice(1) || 'locations');
  useEffect(() => {
    const on = () => setHash(location.hash.slice(1) || 'locations');
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return hash;
}

function App() {
  const [key, setKey] = useState(storedKey());
  // The key's own item (GET /v1/key): its scopes decide what the pages offer (scopes.ts, can). Read at
  // sign-in; after a reload of the tab, read again before any page shows.
  const [info, setInfo] = useState<KeyInfo | undefined>(undefined);
  const [infoError, setInfoError] = useState<string | undefined>(undefined);
  const [attempt, setAttempt] = useState(0);
  setKeyInfo(key ? info : undefined);
  const hash = useHash();
  const live = useMemo(() => new Live(), []);
  const [, setTick] = useState(0);
  const [streaming, setStreaming] = useState(false);
  // Why the console returned to sign-in by itself (the key was refused), shown there.
  const [refused, setRefused] = useState<string | undefined>(undefined);
  const signedIn = useRef(key !== null);
  signedIn.current = key !== null;

  useEffect(
    () =>
      onKeyRefused((reason) => {
        // A wrong key typed at sign-in is that form's own error, not a reason to show twice.
        if (!signedIn.current) return;
        storeKey(null);
        setKey(null);
        setInfo(undefined);
        setStreaming(false);
        setRefused(reason);
      }),
    [],
  );

  useEffect(() => {
    if (!key) return;
    const controller = new AbortController();
    void followEvents(
      (e) => {
        live.apply(e, Date.now());
        setTick((n) => n + 1);
      },
      setStreaming,
      controller.signal,
    );
    return () => controller.abort();
  }, [key, live]);

  useEffect(() => {
    if (!key || info) return;
    let stop = false;
    readKey().then(
      (k) => {
        if (!stop) setInfo(k);
      },
      (err: unknown) => {
        if (!stop) setInfoError(message(err));
      },
    );
    return () => {
      stop = true;
    };
  }, [key, info, attempt]);

  useEffect(() => {
    const main = document.getElementById('main');
    main?.focus();
  }, [hash]);

  if (!key)
    return (
      <SignIn
        reason={refused}
        onKey={(k, i) => {
          storeKey(k);
          setRefused(undefined);
          setInfoError(undefined);
          setInfo(i);
          setKey(k);
        }}
      />
    );
  const [page, ...rest] = hash.split('/');
  const signOut = () => {
    storeKey(null);
    setKey(null);
    setInfo(undefined);
  };
  if (!info)
    return (
      <main id="main" class="signin">
        <h1>ferry console</h1>
        {infoError ? (
          <>
            <Alert error={infoError} />
            <button
              type="button"
              onClick={() => {
                setInfoError(undefined);
                setAttempt((n) => n + 1);
              }}
            >
              Try again
            </button>{' '}
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </>
        ) : (
          <p>Loading…</p>
        )}
      </main>
    );
  return (
    <>
      <button type="button" class="skip" onClick={() => document.getElementById('main')?.focus()}>
        Skip to content
      </button>
      <header>
        <span class="brand">ferry</span>
        <nav aria-label="Main">
          <ul>
            {PAGES.map(([id, title]) => (
              <li key={id}>
                <a
                  href={`#${id}`}
                  aria-current={page === id || (page === 'browse' && id === 'locations') ? 'page' : undefined}
                >
                  {title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <KeyScopes />
        <span class="stream" role="status">
          {streaming ? 'Live' : 'Connecting…'}
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        {page === 'browse' ? (
          <Browser
            location={decodeURIComponent(rest[0] ?? '')}
            path={rest.slice(1).map(decodeURIComponent).join('/').replace(/\/+$/, '')}
          />
        ) : page === 'activity' ? (
          <Activity live={live} job={rest[0] ? decodeURIComponent(rest[0]) : undefined} />
        ) : page === 'sync' ? (
          <Sync live={live} />
        ) : page === 'schedules' ? (
          rest[0] ? (
            <ScheduleDetail id={decodeURIComponent(rest[0])} />
          ) : (
            <Schedules />
          )
        ) : page === 'shares' ? (
          <Shares />
        ) : page === 'sends' ? (
          <Sends live={live} />
        ) : page === 'webhooks' ? (
          <Webhooks />
        ) : page === 'keys' ? (
          <Keys />
        ) : page === 'audit' ? (
          <Audit />
        ) : (
          <Locations />
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
