import { afterEach } from 'vitest';

/**
 * Servers and daemons a test file starts, closed after each test, the last started first:
 * `const closing = closedAfterEach();` then `closing(await startSomething())` returns what it closes.
 */
export function closedAfterEach(): <T extends { close(): Promise<void> }>(thing: T) => T {
  let open: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const thing of open.reverse()) await thing.close();
    open = [];
  });
  return (thing) => {
    open.push(thing);
    return thing;
  };
}
