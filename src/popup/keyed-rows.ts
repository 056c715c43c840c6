/**
 * The rows of a list of the popup, each kept as the same elements while it updates (so a button
 * keeps its focus and a click its target), shown in the order given.
 */
export class KeyedRows<R, E extends { item: HTMLElement }> {
  private readonly rows = new Map<string, E>();

  constructor(
    private readonly list: HTMLElement,
    private readonly key: (row: R) => string,
    private readonly create: (row: R) => E,
  ) {}

  /** Shows `rows`: new ones made, gone ones removed, each refreshed by `update`. */
  render(rows: readonly R[], update: (elements: E, row: R) => void): void {
    const shown = new Set(rows.map(this.key));
    for (const [key, elements] of this.rows) {
      if (shown.has(key)) continue;
      elements.item.remove();
      this.rows.delete(key);
    }
    rows.forEach((row, i) => {
      const key = this.key(row);
      let elements = this.rows.get(key);
      if (!elements) this.rows.set(key, (elements = this.create(row)));
      update(elements, row);
      if (this.list.children[i] !== elements.item) this.list.insertBefore(elements.item, this.list.children[i] ?? null);
    });
  }
}
