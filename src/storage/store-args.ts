/** Argument checks and small helpers the browser stores share. */

export function checkOffset(offset: number): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`Invalid offset ${offset}`);
}

export function checkRange(start: number, end: number): void {
  checkOffset(start);
  if (!Number.isSafeInteger(end) || end < start) throw new RangeError(`Invalid range [${start}, ${end})`);
}

/** Marks a read-ahead as handled so a consumer that stops early leaves no unhandled rejection. */
export function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
