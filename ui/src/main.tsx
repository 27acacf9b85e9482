// The web console (docs/console.md): sign-in, navigation by the address's hash, one live-progress
// stream for every page, and the pages themselves in pages/.
import { render } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { followEvents, onKeyRefused, storedKey, storeKey } from './api.js';
import { Live } from './live.js';
import { Activity } from './pages/activity.js';
import { Browser } from './pages/browser.js';
import { Keys } from './pages/keys.js';
import { Locations } from './pages/locations.js';
import { ScheduleDetail, Schedules } from './pages/schedules.js';
import { Sends } from './pages/sends.js';
import { Shares } from './pages/shares.js';
import { SignIn } from './pages/signin.js';
import { Sync } from './pages/sync.js';
import { Webhooks } from './pages/webhooks.js';

const PAGES = [
  ['locations', 'Locations'],
  ['activity', 'Transfers and jobs'],
  ['sync', 'Sync'],
  ['schedules', 'Schedules'],
  ['shares', 'Shares'],
  ['sends', 'Sends'],
  ['webhooks', 'Webhooks'],
  ['keys', 'API keys'],
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
    const main = document.getElementById('main');
    main?.focus();
  }, [hash]);

  if (!key)
    return (
      <SignIn
        reason={refused}
        onKey={(k) => {
          storeKey(k);
          setRefused(undefined);
          setKey(k);
        }}
      />
    );
  const [page, ...rest] = hash.split('/');
  const signOut = () => {
    storeKey(null);
    setKey(null);
  };
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
            path={rest.slice(1).map(decodeURIComponent).join('/')}
          />
        ) : page === 'activity' ? (
          <Activity live={live} />
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
        ) : (
          <Locations />
        )}
      </main>
    </>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
