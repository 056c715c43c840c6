// @vitest-environment happy-dom
import { expect, it } from 'vitest';
import { StoredBar } from '../../../src/player/stored-bar';

it('moves on from where the last key sent the media, before the media reports its new position', () => {
  const seeks: number[] = [];
  const bar = new StoredBar((seconds) => seeks.push(seconds));
  bar.setPosition(30, 40);
  const press = (key: string) => bar.element.dispatchEvent(new KeyboardEvent('keydown', { key }));
  press('Home');
  press('ArrowRight');
  press('ArrowRight');
  expect(seeks).toEqual([0, 5, 10]);
  expect(bar.element.getAttribute('aria-valuenow')).toBe('10');
  press('End');
  press('ArrowRight');
  expect(seeks.slice(3)).toEqual([40, 40]);
});
