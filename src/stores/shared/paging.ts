// Cursor paging, the one loop every store that pages through a list uses: ask for the first page, then
// for the page after each one with the cursor it names, until a page names none.

/**
 * The pages of a list. `fetch(undefined)` asks for the first page, `fetch(cursor)` for the next;
 * `next(page)` is the cursor the page names, or undefined (also for "", which no provider uses as a
 * cursor) when it is the last. A page is asked for only once the previous one has been consumed.
 */
export async function* pages<Page, Cursor = string>(
  fetch: (cursor: Cursor | undefined) => Promise<Page>,
  next: (page: Page) => Cursor | undefined,
): AsyncGenerator<Page, void, undefined> {
  let cursor: Cursor | undefined;
  do {
    const page = await fetch(cursor);
    yield page;
    const following = next(page);
    cursor = following === '' ? undefined : following;
  } while (cursor !== undefined);
}
